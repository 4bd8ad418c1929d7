import { parseJsonDocument, type JsonDocument } from "../core/json-document.js";
import type { JsonValue } from "../core/json.js";
import type { CallRequest } from "../core/call-request.js";
import { DIALECTS, type DialectName, type TurnCall } from "../interop/dialects/index.js";
import { authorizeBatch, type Decided, type RequestOptions } from "./authorize.js";
import type { AuthorityContext } from "./context.js";
import { invalidRequest } from "./errors.js";
import { DEFAULT_AUTHORITY_LIMITS, type AuthorityLimits } from "./limits.js";

/** A whole model turn in a framework's shape, to authorize every tool call in it. */
export interface AuthorizeTurnRequest {
  readonly grantToken: string;
  readonly dialect: DialectName;
  /** The turn as JSON text (a response, a message, or a bare list of calls, per dialect). */
  readonly turnJson: string;
  /** Approvals to use, keyed by the call id of the turn's tool call. */
  readonly approvalIds?: ReadonlyMap<string, string>;
  /** The run the turn belongs to: each call is decided in it, in order, its call id its step. */
  readonly runId?: string;
}

/** One tool call of the turn: as parsed, as decided, and (when not allowed) what to tell the model. */
export interface TurnCallAnswer {
  readonly call: TurnCall;
  readonly decided: Decided;
  /** The dialect-shaped feedback for a non-allowed call; undefined for an allowed one. */
  readonly feedback?: JsonValue;
}

/** Every call's answer in the turn's order, and the feedback messages ready to append to the conversation. */
export interface TurnAnswer {
  readonly calls: readonly TurnCallAnswer[];
  readonly messages: readonly JsonValue[];
}

/**
 * AuthorizeTurn: parses the turn with the dialect's codec (a malformed turn is INVALID_REQUEST
 * naming the dialect and the problem: nothing in it is decided, so nothing is allowed) and
 * authorizes its calls through the same pipeline as BatchAuthorize — one token check and one
 * catalog/policy version for the whole turn, each decision committed before the answer.
 */
export async function authorizeTurn(
  ctx: AuthorityContext,
  req: AuthorizeTurnRequest,
  options: RequestOptions = {},
): Promise<TurnAnswer> {
  const codec = DIALECTS[req.dialect];
  const parsed = codec.parseCalls(readTurn(req.turnJson, ctx.limits ?? DEFAULT_AUTHORITY_LIMITS));
  if (!parsed.ok) throw invalidRequest("turn_json", parsed.error);
  const calls = parsed.calls;
  const ids = new Set(calls.map((c) => c.callId));
  for (const id of req.approvalIds?.keys() ?? [])
    if (!ids.has(id))
      throw invalidRequest(`approval_ids[${JSON.stringify(id)}]`, "names no tool call of the turn");
  if (calls.length === 0) return { calls: [], messages: [] };
  if (calls.length > ctx.maxBatch)
    throw invalidRequest(
      "turn_json",
      `at most ${ctx.maxBatch} tool calls per turn (it holds ${calls.length})`,
    );
  // A call retried after its approval names the approval (keyed by the turn's call id).
  const decided = await authorizeBatch(
    ctx,
    {
      grantToken: req.grantToken,
      calls: calls.map((c) => callRequest(c, req.approvalIds?.get(c.callId), req.runId)),
    },
    options,
  );
  const answers = calls.map((call, i): TurnCallAnswer => {
    const d = decided[i] as Decided;
    return d.verdict.decision === "allow"
      ? { call, decided: d }
      : { call, decided: d, feedback: codec.renderFeedback(call, d.verdict) };
  });
  return {
    calls: answers,
    messages: codec.feedbackMessages(
      answers.flatMap((a) => (a.feedback === undefined ? [] : [a.feedback])),
    ),
  };
}

/**
 * The turn read as a document: it is not parsed strictly here, since a problem inside a call's
 * arguments is that call's deny, decided by the pipeline on the arguments' own text; the codec
 * refuses the turn for a problem anywhere else. Nesting past the arguments' own bound (plus room
 * for the turn's envelope) is passed over whole and left to that strict parse.
 */
function readTurn(text: string, limits: AuthorityLimits): JsonDocument {
  if (text.trim() === "") throw invalidRequest("turn_json", "is required");
  const read = parseJsonDocument(text, {
    maxBytes: Number.MAX_SAFE_INTEGER,
    maxDepth: limits.arguments.maxDepth + TURN_ENVELOPE_DEPTH,
  });
  if (!read.ok)
    throw invalidRequest(
      "turn_json",
      read.problem === "syntax" ? "is not valid JSON" : read.message,
    );
  return read.document;
}

/** How deeply a dialect's envelope may nest a call's arguments (OpenAI's chat completion: 6). */
const TURN_ENVELOPE_DEPTH = 16;

/** A parsed call as the pipeline's request: by tool name, arguments still JSON text, with the approval it presents. */
function callRequest(
  call: TurnCall,
  approvalId: string | undefined,
  runId: string | undefined,
): CallRequest {
  return {
    callId: call.callId,
    toolName: call.toolName,
    actionId: "",
    argumentsJson: call.argumentsJson,
    ...(approvalId === undefined || approvalId === "" ? {} : { approvalId }),
    ...(runId === undefined || runId === "" ? {} : { step: { runId, toolCallId: call.callId } }),
  };
}
