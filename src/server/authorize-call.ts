import { decide } from "../core/decide.js";
import type { ToolCall } from "../core/verdict.js";
import type { ToolCall as PbToolCall, Verdict as PbVerdict } from "../gen/charter/v1/common_pb.js";
import { verdictToProto } from "../interop/verdict-codec.js";
import { signReceipt } from "../token/index.js";
import type { ServerContext } from "./context.js";
import type { GrantCheck } from "./grant-check.js";
import { invalidField } from "./rpc-error.js";

/** Checks the fields every tool call needs; the message names the field, e.g. `items[2].call.call_id`. */
export function validateToolCall(call: PbToolCall | undefined, field: string): PbToolCall {
  if (!call) throw invalidField(field, "is required");
  if (call.callId === "") throw invalidField(`${field}.call_id`, "is required");
  if (call.toolName === "" && call.actionId === "") throw invalidField(`${field}.tool_name`, "tool_name or action_id is required");
  return call;
}

/**
 * The Authorize pipeline for one call: a checked grant, the arguments parsed, the pure decision,
 * then what needs state — a decision id and, on allow, a signed receipt. A failure to decide is
 * an error (never an allow).
 */
export async function authorizeCall(ctx: ServerContext, check: GrantCheck, pb: PbToolCall, now: number): Promise<PbVerdict> {
  const decisionId = ctx.newId("dec");
  const names = { callId: pb.callId, actionId: "", toolName: pb.toolName, callDigest: "" };
  if (!check.ok) {
    return verdictToProto({ decision: "deny", reason: { code: check.code, message: check.message }, ...names }, { decisionId });
  }
  const args = parseArguments(pb.argumentsJson);
  if (args === INVALID) {
    return verdictToProto(
      {
        decision: "deny",
        reason: { code: "INVALID_ARGUMENTS", message: "The arguments are not valid JSON. Send a JSON object and call again." },
        ...names,
      },
      { decisionId },
    );
  }
  const call: ToolCall = {
    callId: pb.callId,
    arguments: args,
    ...(pb.toolName === "" ? {} : { toolName: pb.toolName }),
    ...(pb.actionId === "" ? {} : { actionId: pb.actionId }),
  };
  const { catalog } = ctx.authority();
  const grant = check.grant;
  const verdict = decide(grant, catalog, call, { now });
  if (verdict.decision !== "allow") return verdictToProto(verdict, { decisionId });
  const receipt = await signReceipt(
    {
      decisionId,
      grantId: grant.id,
      subject: grant.subject,
      actionId: verdict.actionId,
      toolName: verdict.toolName,
      resource: verdict.resource ?? "",
      callId: verdict.callId,
      argsDigest: verdict.callDigest,
      catalogVersion: catalog.version,
    },
    ctx.ring,
    { issuer: ctx.tokens.issuer, audience: ctx.tokens.audience, now, ttlSeconds: ctx.tokens.receiptTtlSeconds },
  );
  return verdictToProto(verdict, { decisionId, receipt });
}

const INVALID = Symbol("invalid");

/** Parses arguments_json; empty text means "no arguments" ({}). */
function parseArguments(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return INVALID;
  }
}
