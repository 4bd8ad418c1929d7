import { parseJsonDocument, type JsonDocument } from "../core/json-document.js";
import { isJsonObject, type JsonValue } from "../core/json.js";
import { parseStrictJson } from "../core/strict-json.js";
import { DIALECTS } from "./dialects/index.js";

/**
 * The `_meta` key under which the gateway's transport hands a `tools/call` request's arguments to
 * the gateway's handler as the exact text the agent sent (whatever the agent put there itself is
 * overwritten). The handler authorizes that text, so the arguments are parsed strictly once, by
 * Charter's pipeline, as at every other door; it is never forwarded upstream.
 */
export const ARGUMENTS_TEXT_KEY = "io.charter/arguments-json";

/** JSON-RPC "Invalid Request", "Invalid params" and "Parse error". */
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
export const PARSE_ERROR = -32700;

/** How deeply a received message may nest before a part is passed over (left to the strict parse). */
const MESSAGE_LIMITS = { maxBytes: Number.MAX_SAFE_INTEGER, maxDepth: 256 } as const;

/** A received message made ready for the MCP server, or the JSON-RPC error that answers it. */
export type ReceivedMessage =
  | { readonly ok: true; readonly value: JsonValue }
  | {
      readonly ok: false;
      readonly code: number;
      readonly message: string;
      /** The request's id, when the message could be read far enough to have one. */
      readonly id?: string | number;
    };

/**
 * Reads one received JSON-RPC text without `JSON.parse`: a repeated key, a lone surrogate, a
 * number out of range or nesting too deep inside a `tools/call`'s arguments reaches Charter as
 * that text (and is denied INVALID_ARGUMENTS there, as Authorize denies it); anywhere else in a
 * message it is an error answer, and the message goes nowhere.
 */
export function readReceived(text: string): ReceivedMessage {
  const read = parseJsonDocument(text, MESSAGE_LIMITS);
  if (!read.ok)
    return {
      ok: false,
      code: PARSE_ERROR,
      message:
        read.problem === "syntax"
          ? "Parse error: the line is not JSON"
          : `Parse error: ${read.message}`,
    };
  const { value } = read.document;
  if (isToolsCall(value)) return withArgumentsText(read.document);
  const problem = read.document.problems[0];
  if (problem) {
    const message = `Invalid Request: ${problem.message}`;
    return { ok: false, code: INVALID_REQUEST, message, ...idOf(value) };
  }
  return { ok: true, value };
}

/** A `tools/call` with its arguments' text under `ARGUMENTS_TEXT_KEY` in its params' `_meta`. */
function withArgumentsText(message: JsonDocument): ReceivedMessage {
  const parsed = DIALECTS.mcp.parseCalls(message);
  const call = parsed.ok ? parsed.calls[0] : undefined;
  if (!parsed.ok || call === undefined) {
    const problem = parsed.ok ? "no call" : parsed.error;
    const id = idOf(message.value);
    return { ok: false, code: INVALID_PARAMS, message: `Invalid params: ${problem}`, ...id };
  }
  const value = message.value as { readonly params: Record<string, JsonValue> };
  const meta = isJsonObject(value.params["_meta"]) ? value.params["_meta"] : {};
  const params = { ...value.params, _meta: { ...meta, [ARGUMENTS_TEXT_KEY]: call.argumentsJson } };
  return { ok: true, value: { ...value, params } };
}

/**
 * The arguments' text a received `tools/call` carries (`withArgumentsText`), and its params as
 * they go upstream (without that key). Undefined when the transport put none there: such a call is
 * refused, never authorized on a value parsed elsewhere.
 */
export function takeArgumentsText(
  params: { readonly _meta?: Record<string, unknown> | undefined } & Record<string, unknown>,
):
  { readonly argumentsJson: string; readonly upstreamParams: Record<string, unknown> } | undefined {
  const meta = params._meta;
  const text = meta?.[ARGUMENTS_TEXT_KEY];
  if (typeof text !== "string") return undefined;
  const { [ARGUMENTS_TEXT_KEY]: _taken, ...rest } = meta as Record<string, unknown>;
  const { _meta: _dropped, ...others } = params;
  return {
    argumentsJson: text,
    upstreamParams: Object.keys(rest).length === 0 ? others : { ...others, _meta: rest },
  };
}

/** A JSON-RPC 2.0 `tools/call` request (with an id); anything less is for the SDK to refuse. */
function isToolsCall(value: JsonValue): boolean {
  return (
    isJsonObject(value) &&
    value["jsonrpc"] === "2.0" &&
    value["method"] === "tools/call" &&
    Object.keys(idOf(value)).length > 0
  );
}

function idOf(message: JsonValue): { readonly id?: string | number } {
  const id = isJsonObject(message) ? message["id"] : undefined;
  return typeof id === "string" || typeof id === "number" ? { id } : {};
}

/** The allowed text was within the server's limits; the gateway adds none of its own. */
const FORWARD_LIMITS = { maxBytes: Number.MAX_SAFE_INTEGER, maxDepth: 100_000 } as const;

/**
 * The arguments an allowed call is forwarded with: the value of the very text Charter decided on
 * (allowed, so it parses strictly); undefined when it is not one JSON object.
 */
export function forwardedArguments(argumentsJson: string): Record<string, unknown> | undefined {
  const args = parseStrictJson(argumentsJson, FORWARD_LIMITS);
  return args.ok && isJsonObject(args.value) ? args.value : undefined;
}
