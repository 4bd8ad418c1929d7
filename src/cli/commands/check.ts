import { toJson } from "@bufbuild/protobuf";
import { authorize, type CallRequest, type Decision } from "../../authority/index.js";
import { VerdictSchema, type Verdict } from "../../gen/charter/v1/common_pb.js";
import { callToProto } from "../../interop/call-codec.js";
import { decisionFromProto } from "../../interop/enums.js";
import { verdictToProto } from "../../interop/verdict-codec.js";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";
import { SERVER_FLAGS, serverAddress, withTarget, type Target } from "../target.js";
import { TARGET_STEP_FLAGS, targetAndStep } from "./check-step.js";
import { issueOn } from "./issue.js";

/** Exit codes of `charter check`, one per decision. */
export const CHECK_EXIT: Readonly<Record<Decision, number>> = {
  allow: 0,
  deny: 1,
  require_approval: 2,
  effect_suppressed: 3,
};

/**
 * `charter check`: authorizes one call under a grant token (--token) or under a grant issued on
 * the spot for a profile (--profile) — by the running server's Authorize with --server, or by the
 * same application layer offline. Both print the same verdict JSON; the exit code is the decision.
 */
export async function checkCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, {
    ...CONFIG_FLAGS,
    token: { type: "string" },
    profile: { type: "string" },
    tool: { type: "string" },
    action: { type: "string" },
    args: { type: "string" },
    "approval-id": { type: "string" },
    ...TARGET_STEP_FLAGS,
    ...SERVER_FLAGS,
  });
  if (values.token !== undefined && values.profile !== undefined)
    throw new UsageError("give --token or --profile, not both");
  // CHARTER_TOKEN stands in for --token unless a profile is named.
  const token =
    values.token ?? (values.profile === undefined ? io.env["CHARTER_TOKEN"] : undefined);
  const profile = values.profile;
  if (token === undefined && profile === undefined)
    throw new UsageError("--token (or CHARTER_TOKEN) or --profile is required");
  if (values.tool === undefined && values.action === undefined)
    throw new UsageError("--tool or --action is required");
  // The text is sent as typed and parsed by the pipeline alone, as at every door: what is decided
  // is exactly what the user wrote, and text that is not one JSON object is an INVALID_ARGUMENTS deny.
  const argumentsJson = values.args ?? "{}";
  const approvalId = values["approval-id"];
  const call: CallRequest = {
    ...targetAndStep(values),
    toolName: values.tool ?? "",
    actionId: values.action ?? "",
    argumentsJson,
    ...(approvalId === undefined ? {} : { approvalId }),
  };
  return withTarget(
    serverAddress(values.server, io, values["api-key"]),
    () => configFrom(values, io.env),
    io,
    async (target) => {
      const grantToken =
        token ??
        (
          await issueOn(target, {
            profile: profile as string,
            subject: "agent:cli",
            owner: "owner:cli",
            purpose: "check",
          })
        ).token;
      const verdict = await authorizeOn(target, grantToken, call);
      const decision = decisionFromProto(verdict.decision);
      if (decision === undefined) throw new Error("the server answered no decision");
      io.out(JSON.stringify(toJson(VerdictSchema, verdict), null, 2));
      return CHECK_EXIT[decision];
    },
  );
}

async function authorizeOn(
  target: Target,
  grantToken: string,
  call: CallRequest,
): Promise<Verdict> {
  if (target.kind === "server") {
    const { verdict } = await target.clients.authority.authorize({
      grantToken,
      call: callToProto(call),
      ...(call.approvalId === undefined ? {} : { approvalId: call.approvalId }),
    });
    if (!verdict) throw new Error("the server answered no verdict");
    return verdict;
  }
  const decided = await authorize(target.ctx, { grantToken, call });
  return verdictToProto(decided.verdict, decided);
}
