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

/** Pydantic AI `ToolDefinition`s: `{name, description, parameters_json_schema, kind: "function"}`. */
export type PydanticToolDefinition = {
  name: string;
  description: string;
  parameters_json_schema: JsonObject;
  kind: "function";
};

/** A `RetryPromptPart` telling the model why its call did not run. */
export type PydanticRetryPrompt = {
  part_kind: "retry-prompt";
  content: string;
  tool_name: string;
  tool_call_id: string;
};

export function renderPydanticTools(view: CatalogView): PydanticToolDefinition[] {
  return view.tools.map(pydanticTool);
}

const pydanticTool = perEntry((t): PydanticToolDefinition => ({
  name: t.name,
  description: describeTool(t),
  parameters_json_schema: t.inputSchema,
  kind: "function",
}));

/**
 * `tool-call` parts of a Pydantic AI turn: a `ModelResponse` (`{kind: "response", parts}`) or
 * the bare list of its parts. A part is `{part_kind: "tool-call", tool_name, args, tool_call_id}`;
 * `args` is a JSON string, a dict, or null (none). Other parts (text, thinking, builtin tools) are
 * skipped.
 */
function readPydantic(payload: unknown): RawCall[] {
  if (Array.isArray(payload)) return readParts(payload, "parts");
  const response = objectAt(payload, "the turn");
  if (response["kind"] !== "response")
    malformed(`kind must be "response" (got ${JSON.stringify(response["kind"])})`);
  return readParts(arrayAt(response["parts"], "parts"), "parts");
}

function readParts(parts: readonly unknown[], at: string): RawCall[] {
  return parts.flatMap((raw, i) => {
    const part = objectAt(raw, `${at}[${i}]`);
    if (typeof part["part_kind"] !== "string") malformed(`${at}[${i}].part_kind must be a string`);
    if (part["part_kind"] !== "tool-call") return [];
    return [
      {
        id: stringIdAt(part["tool_call_id"], `${at}[${i}].tool_call_id`),
        name: nameAt(part["tool_name"], `${at}[${i}].tool_name`),
        arguments: argumentsAt(part["args"] ?? undefined, `${at}[${i}].args`),
      },
    ];
  });
}

/** A non-allowed call's answer as a `retry-prompt` part. */
export function pydanticFeedback(call: TurnCall, verdict: Verdict): PydanticRetryPrompt {
  return {
    part_kind: "retry-prompt",
    content: feedbackText(verdict),
    tool_name: call.toolName,
    tool_call_id: call.callId,
  };
}

export const pydanticAi: DialectCodec = {
  name: "pydantic_ai",
  renderTools: renderPydanticTools,
  parseCalls: (turn) => parseWith("pydantic_ai", turn, readPydantic),
  renderFeedback: pydanticFeedback,
  feedbackMessages: (feedback) =>
    feedback.length === 0 ? [] : [{ kind: "request", parts: [...feedback] }],
};
