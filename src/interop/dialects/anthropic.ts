import type { JsonObject } from "../../core/json.js";
import type { Verdict } from "../../core/verdict.js";
import type { CatalogView } from "../../core/project.js";
import {
  argumentsAt,
  arrayAt,
  describeTool,
  feedbackText,
  malformed,
  nameAt,
  objectAt,
  parseWith,
  perEntry,
  stringIdAt,
  type RawCall,
} from "./common.js";
import type { DialectCodec, TurnCall } from "./types.js";

/** An Anthropic tool; `input_schema` is always an object schema. */
export type AnthropicTool = {
  name: string;
  description: string;
  input_schema: JsonObject & { type: "object" };
};

/** A `tool_result` block with `is_error`, answering one `tool_use`. */
export type AnthropicToolResult = {
  type: "tool_result";
  tool_use_id: string;
  content: string;
  is_error: true;
};

/** The user message that carries a turn's tool results. */
export type AnthropicResultMessage = { role: "user"; content: AnthropicToolResult[] };

/** Anthropic Messages tools: `{name, description, input_schema}`. */
export function renderAnthropicTools(view: CatalogView): AnthropicTool[] {
  return view.tools.map(anthropicTool);
}

const anthropicTool = perEntry((t): AnthropicTool => ({
  name: t.name,
  description: describeTool(t),
  input_schema: { ...t.inputSchema, type: "object" },
}));

/** A non-allowed call's answer as a `tool_result` block. */
export function anthropicFeedback(call: TurnCall, verdict: Verdict): AnthropicToolResult {
  return {
    type: "tool_result",
    tool_use_id: call.callId,
    content: feedbackText(verdict),
    is_error: true,
  };
}

/** A turn's tool results as the one user message Anthropic expects next. */
export function anthropicMessages(
  results: readonly AnthropicToolResult[],
): AnthropicResultMessage[] {
  return results.length === 0 ? [] : [{ role: "user", content: [...results] }];
}

/**
 * `tool_use` blocks of an Anthropic turn: a whole `message` response, an assistant message param
 * (`{role, content}`; string content holds no calls), or a bare list of content blocks. Other
 * block types (text, thinking, server tools Anthropic runs itself) are skipped.
 */
function readAnthropic(payload: unknown): RawCall[] {
  if (Array.isArray(payload)) return readBlocks(payload, "content");
  const message = objectAt(payload, "the turn");
  if (message["role"] !== undefined && message["role"] !== "assistant")
    malformed('role must be "assistant"');
  const content = message["content"];
  if (typeof content === "string") return [];
  return readBlocks(arrayAt(content, "content"), "content");
}

function readBlocks(blocks: readonly unknown[], at: string): RawCall[] {
  return blocks.flatMap((raw, i) => {
    const block = objectAt(raw, `${at}[${i}]`);
    if (typeof block["type"] !== "string") malformed(`${at}[${i}].type must be a string`);
    if (block["type"] !== "tool_use") return [];
    return [
      {
        id: stringIdAt(block["id"], `${at}[${i}].id`),
        name: nameAt(block["name"], `${at}[${i}].name`),
        arguments: argumentsAt(block["input"], `${at}[${i}].input`),
      },
    ];
  });
}

export const anthropic: DialectCodec = {
  name: "anthropic",
  renderTools: renderAnthropicTools,
  parseCalls: (turn) => parseWith("anthropic", turn, readAnthropic),
  renderFeedback: anthropicFeedback,
  // The table only ever hands back what anthropicFeedback rendered.
  feedbackMessages: (feedback) => anthropicMessages(feedback as AnthropicToolResult[]),
};
