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

/** A Chat Completions function tool. */
export type ChatTool = {
  type: "function";
  function: { name: string; description: string; parameters: JsonObject };
};

/** A `role: "tool"` message answering one tool call. */
export type ChatToolMessage = { role: "tool"; tool_call_id: string; content: string };

/** OpenAI Chat Completions tools: `{type: "function", function: {name, description, parameters}}`. */
export function renderChatTools(view: CatalogView): ChatTool[] {
  return view.tools.map(chatTool);
}

const chatTool = perEntry((t): ChatTool => ({
  type: "function",
  function: { name: t.name, description: describeTool(t), parameters: t.inputSchema },
}));

/** A non-allowed call's answer, as the `role: "tool"` message the model reads. */
export function chatFeedback(call: TurnCall, verdict: Verdict): ChatToolMessage {
  return { role: "tool", tool_call_id: call.callId, content: feedbackText(verdict) };
}

/**
 * Tool calls of a Chat Completions turn: a whole `chat.completion` (one choice), its assistant
 * message, or the bare `tool_calls` array. Each call is `{id, type: "function", function: {name,
 * arguments}}`; `arguments` is the model's JSON text (an object is accepted too).
 */
function readChat(payload: unknown): RawCall[] {
  if (Array.isArray(payload)) return payload.map((c, i) => readToolCall(c, `tool_calls[${i}]`));
  const top = objectAt(payload, "the turn");
  if (top["choices"] !== undefined) {
    const choices = arrayAt(top["choices"], "choices");
    if (choices.length !== 1)
      malformed(
        `choices must hold exactly one choice (it holds ${choices.length}); send the chosen message`,
      );
    return readMessage(
      objectAt(objectAt(choices[0], "choices[0]")["message"], "choices[0].message"),
      "choices[0].message.",
    );
  }
  return readMessage(top, "");
}

function readMessage(message: JsonObject, at: string): RawCall[] {
  if (message["role"] !== undefined && message["role"] !== "assistant")
    malformed(`${at}role must be "assistant"`);
  if (message["function_call"] !== undefined && message["function_call"] !== null)
    malformed(`${at}function_call (the deprecated single call) is not supported; send tool_calls`);
  const calls = message["tool_calls"];
  if (calls === undefined || calls === null) return [];
  return arrayAt(calls, `${at}tool_calls`).map((c, i) => readToolCall(c, `${at}tool_calls[${i}]`));
}

function readToolCall(raw: unknown, at: string): RawCall {
  const call = objectAt(raw, at);
  if (call["type"] !== undefined && call["type"] !== "function")
    malformed(`${at}.type must be "function" (got ${JSON.stringify(call["type"])})`);
  const fn = objectAt(call["function"], `${at}.function`);
  return {
    id: stringIdAt(call["id"], `${at}.id`),
    name: nameAt(fn["name"], `${at}.function.name`),
    arguments: argumentsAt(fn["arguments"], `${at}.function.arguments`),
  };
}

export const openaiChat: DialectCodec = {
  name: "openai_chat",
  renderTools: renderChatTools,
  parseCalls: (turn) => parseWith("openai_chat", turn, readChat),
  renderFeedback: chatFeedback,
  feedbackMessages: (feedback) => [...feedback],
};
