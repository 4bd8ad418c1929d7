import { canonicalJson, descriptorDigest } from "../../core/digest.js";
import { isJsonObject, type JsonObject, type JsonValue } from "../../core/json.js";
import type { CatalogView, ViewEntry } from "../../core/project.js";
import type { ReasonCode, Verdict } from "../../core/verdict.js";
import {
  argumentsAt,
  describeTool,
  feedbackText,
  malformed,
  nameAt,
  objectAt,
  parseWith,
  perEntry,
  type RawCall,
} from "./common.js";
import type { DialectCodec, TurnCall } from "./types.js";

/** JSON-RPC "Invalid params": what MCP answers for a tool the server does not have. */
export const MCP_INVALID_PARAMS = -32602;

/**
 * Denials that mean "this tool does not exist for you": the tool is absent from the grant's
 * `tools/list`, so MCP's unknown-tool error is the answer rather than a tool result.
 */
const ABSENT: ReadonlySet<ReasonCode> = new Set(["UNKNOWN_ACTION", "NOT_GRANTED", "EXPLICIT_DENY"]);

/**
 * An MCP `tools/list` result. `outputSchema` is left out on purpose: the MCP client rejects any
 * result of a tool with an output schema that lacks matching `structuredContent`, and neither
 * Charter nor a gateway can promise that of an upstream server (results pass through unchanged).
 */
export function renderMcpTools(view: CatalogView): McpToolList {
  return { tools: view.tools.map(sharedMcpTool) };
}

const sharedMcpTool = perEntry(mcpTool);

/** MCP's tool annotations (hints). */
export type McpAnnotations = {
  title?: string;
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint: boolean;
};

/** One tool of a `tools/list` result. */
export type McpTool = {
  name: string;
  description: string;
  inputSchema: JsonObject & { type: "object" };
  annotations: McpAnnotations;
};

/** A `tools/list` result. */
export type McpToolList = { tools: McpTool[] };

/** The JSON-RPC response a non-allowed `tools/call` gets: an `isError` tool result, or -32602 for an absent tool. */
export type McpFeedback =
  | {
      jsonrpc: "2.0";
      id: string | number;
      result: { content: { type: "text"; text: string }[]; isError: true };
    }
  | { jsonrpc: "2.0"; id: string | number; error: { code: number; message: string } };

/** One tool of a `tools/list` result, with annotations per MCP's definitions. */
export function mcpTool(t: ViewEntry): McpTool {
  return {
    name: t.name,
    description: describeTool(t),
    inputSchema: { ...t.inputSchema, type: "object" },
    annotations: mcpAnnotations(t),
  };
}

/**
 * MCP's hints: what the catalog sets explicitly, else derived from the effect. `readOnlyHint` is
 * true for `read`; for anything else `destructiveHint` defaults to true (MCP's own default, so a
 * replacing write is not called harmless) and `openWorldHint` is true for `external` only.
 */
export function mcpAnnotations(t: ViewEntry): McpAnnotations {
  const set = t.annotations ?? {};
  const readOnly = set.readOnlyHint ?? t.effect === "read";
  return {
    ...(set.title === undefined ? {} : { title: set.title }),
    readOnlyHint: readOnly,
    ...(readOnly ? {} : { destructiveHint: set.destructiveHint ?? true }),
    ...(set.idempotentHint === undefined ? {} : { idempotentHint: set.idempotentHint }),
    openWorldHint: set.openWorldHint ?? t.effect === "external",
  };
}

/**
 * Calls of an MCP turn: a JSON-RPC `tools/call` request, a batch (array) of them, or bare
 * `CallToolRequest` params `{name, arguments}` (no id: Charter derives one). A JSON-RPC id is a
 * string or a number and keeps its type; any other method is malformed, never skipped.
 */
function readMcp(payload: unknown): RawCall[] {
  if (Array.isArray(payload)) {
    if (payload.length === 0) malformed("a batch must hold at least one request");
    return payload.map((m, i) => readRequest(m, `batch[${i}]`));
  }
  return [readRequest(payload, "the turn")];
}

function readRequest(raw: unknown, at: string): RawCall {
  const message = objectAt(raw, at);
  if (message["method"] === undefined) return readParams(message, undefined, at);
  if (message["jsonrpc"] !== "2.0") malformed(`${at}.jsonrpc must be "2.0"`);
  if (message["method"] !== "tools/call")
    malformed(`${at}.method must be "tools/call" (got ${JSON.stringify(message["method"])})`);
  const id = message["id"];
  if (!(typeof id === "string" || (typeof id === "number" && Number.isFinite(id))))
    malformed(`${at}.id must be a string or a number`);
  return readParams(objectAt(message["params"], `${at}.params`), id, `${at}.params`);
}

function readParams(params: JsonObject, id: string | number | undefined, at: string): RawCall {
  return {
    id,
    name: nameAt(params["name"], `${at}.name`),
    arguments: argumentsAt(params["arguments"], `${at}.arguments`),
  };
}

/** The JSON-RPC id a response to `call` carries: the request's own, with its type. */
function responseId(call: TurnCall): string | number {
  return call.wireId ?? call.callId;
}

/** A non-allowed call's JSON-RPC response, with the request's id (and its type). */
export function mcpFeedback(call: TurnCall, verdict: Verdict): McpFeedback {
  return verdict.decision === "deny" && verdict.reason && ABSENT.has(verdict.reason.code)
    ? {
        jsonrpc: "2.0",
        id: responseId(call),
        error: { code: MCP_INVALID_PARAMS, message: `Unknown tool: ${call.toolName}` },
      }
    : {
        jsonrpc: "2.0",
        id: responseId(call),
        result: { content: [{ type: "text", text: feedbackText(verdict) }], isError: true },
      };
}

export const mcp: DialectCodec = {
  name: "mcp",
  renderTools: renderMcpTools,
  parseCalls: (turn) => parseWith("mcp", turn, readMcp),
  renderFeedback: mcpFeedback,
  feedbackMessages: (feedback) => [...feedback],
};

/** Whether a rendered MCP feedback is a JSON-RPC error (rather than an `isError` tool result). */
export function isMcpError(
  feedback: JsonValue,
): feedback is JsonObject & { error: { code: number; message: string } } {
  return isJsonObject(feedback) && isJsonObject(feedback["error"]);
}

/**
 * The pin of a tool an MCP server lists, comparable with a view entry's `descriptorDigest`: equal
 * only when name, description and input schema are exactly the catalog's.
 */
export function mcpToolDigest(tool: {
  readonly name: string;
  readonly description?: string | undefined;
  readonly inputSchema: unknown;
}): string {
  return descriptorDigest({
    name: tool.name,
    description: tool.description ?? "",
    inputSchema: tool.inputSchema,
  });
}

/** One key per exact call (tool name and canonical arguments): a retried call has the same key. */
export function mcpCallKey(name: string, args: unknown): string {
  return canonicalJson({ name, arguments: args ?? {} });
}
