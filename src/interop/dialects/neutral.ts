import type { JsonObject, JsonValue } from "../../core/json.js";
import type { CatalogView } from "../../core/project.js";
import {
  argumentsAt,
  arrayAt,
  nameAt,
  objectAt,
  parseWith,
  perEntry,
  stringIdAt,
  type RawCall,
} from "./common.js";
import type { DialectCodec } from "./types.js";

/** Charter's own shape: the view's entries as they are. */
function renderNeutralTools(view: CatalogView): JsonValue {
  return view.tools.map(neutralTool);
}

const neutralTool = perEntry((t): JsonObject => ({
  name: t.name,
  description: t.description,
  inputSchema: t.inputSchema,
  ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
  status: t.status,
  effect: t.effect,
}));

/** Neutral calls `{callId, toolName, arguments}` (the ToolCall fields): one, a list, or `{calls: [...]}`. */
function readNeutral(payload: unknown): RawCall[] {
  if (Array.isArray(payload)) return payload.map((c, i) => readCall(c, `calls[${i}]`));
  const top = objectAt(payload, "the turn");
  if (top["calls"] !== undefined)
    return arrayAt(top["calls"], "calls").map((c, i) => readCall(c, `calls[${i}]`));
  return [readCall(top, "the call")];
}

function readCall(raw: unknown, at: string): RawCall {
  const call = objectAt(raw, at);
  return {
    id: stringIdAt(call["callId"], `${at}.callId`),
    name: nameAt(call["toolName"], `${at}.toolName`),
    arguments: argumentsAt(call["arguments"], `${at}.arguments`),
  };
}

export const neutral: DialectCodec = {
  name: "neutral",
  renderTools: renderNeutralTools,
  parseCalls: (turn) => parseWith("neutral", turn, readNeutral),
  renderFeedback: (call, v) => ({
    callId: call.callId,
    toolName: call.toolName,
    decision: v.decision,
    ...(v.reason ? { reason: { code: v.reason.code, message: v.reason.message } } : {}),
    ...(v.requirement === undefined ? {} : { requirement: v.requirement }),
    ...(v.approvalId === undefined || v.approvalId === "" ? {} : { approvalId: v.approvalId }),
  }),
  feedbackMessages: (feedback) => [...feedback],
};
