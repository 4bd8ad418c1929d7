import type { JsonObject } from "../../core/json.js";
import type { Verdict } from "../../core/verdict.js";
import {
  argumentsAt,
  arrayAt,
  feedbackText,
  malformed,
  nameAt,
  objectAt,
  parseWith,
  stringIdAt,
  type RawCall,
} from "./common.js";
import { renderChatTools } from "./openai-chat.js";
import type { DialectCodec, TurnCall } from "./types.js";

/**
 * Tool calls of a LangChain turn: an `AIMessage` as a dict (`{type: "ai", tool_calls,
 * invalid_tool_calls}`), as LangChain's serialized constructor (`{lc: 1, type: "constructor", id:
 * [..., "AIMessage"], kwargs}`), or the bare `tool_calls` list. A call is `{name, args, id, type:
 * "tool_call"}`; an `invalid_tool_call` (arguments the model wrote that did not parse) is a call
 * too, so Authorize denies it with feedback rather than it being dropped.
 */
function readLangchain(payload: unknown): RawCall[] {
  if (Array.isArray(payload)) return payload.map((c, i) => readCall(c, `tool_calls[${i}]`));
  let message = objectAt(payload, "the turn");
  if (message["lc"] !== undefined) {
    const id = message["id"];
    if (message["type"] !== "constructor" || !Array.isArray(id) || id.at(-1) !== "AIMessage")
      malformed("a serialized message must be an AIMessage constructor");
    message = objectAt(message["kwargs"], "kwargs");
  } else if (
    message["type"] !== undefined &&
    message["type"] !== "ai" &&
    message["type"] !== "AIMessageChunk"
  ) {
    malformed(`type must be "ai" (got ${JSON.stringify(message["type"])})`);
  }
  return [...listAt(message, "tool_calls"), ...listAt(message, "invalid_tool_calls")];
}

function listAt(message: JsonObject, key: string): RawCall[] {
  const list = message[key];
  if (list === undefined || list === null) return [];
  return arrayAt(list, key).map((c, i) => readCall(c, `${key}[${i}]`));
}

function readCall(raw: unknown, at: string): RawCall {
  const call = objectAt(raw, at);
  const type = call["type"];
  if (type !== undefined && type !== "tool_call" && type !== "invalid_tool_call")
    malformed(`${at}.type must be "tool_call" or "invalid_tool_call"`);
  return {
    id: stringIdAt(call["id"], `${at}.id`),
    name: nameAt(call["name"], `${at}.name`),
    arguments: argumentsAt(call["args"] ?? undefined, `${at}.args`),
  };
}

/** A LangChain `ToolMessage` (as a dict) reporting a failed call. */
export type LangchainToolMessage = {
  type: "tool";
  content: string;
  tool_call_id: string;
  name: string;
  status: "error";
};

/** A non-allowed call's answer as a `ToolMessage` with `status: "error"`. */
export function langchainFeedback(call: TurnCall, verdict: Verdict): LangchainToolMessage {
  return {
    type: "tool",
    content: feedbackText(verdict),
    tool_call_id: call.callId,
    name: call.toolName,
    status: "error",
  };
}

export const langchain: DialectCodec = {
  name: "langchain",
  // `bind_tools` takes OpenAI-format tool dicts, in Python and JS alike.
  renderTools: renderChatTools,
  parseCalls: (turn) => parseWith("langchain", turn, readLangchain),
  renderFeedback: langchainFeedback,
  feedbackMessages: (feedback) => [...feedback],
};
