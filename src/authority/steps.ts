import type { CallRequest, ParsedArguments } from "../core/call-request.js";
import type { TaskGrant } from "../core/grant.js";
import type { Policy } from "../core/policy.js";
import { stepFingerprint, stepKey, stepProblem } from "../core/step.js";
import type { Verdict } from "../core/verdict.js";
import { withdrawal } from "../core/withdraw.js";
import { StoreError, type CommitRefusalCode, type HeldStep, type StepSlot } from "../store/port.js";
import { refusedVerdict } from "./commit-refusal.js";
import { invalidRequest } from "./errors.js";

/** A call with a step, as the step index knows it: where it is held and what was asked. */
export interface StepAsk {
  readonly runId: string;
  readonly stepKey: string;
  readonly fingerprint: string;
  /** The call presents an approval: a held require_approval is decided again (see StepSlot.supersedesPending). */
  readonly presentsApproval: boolean;
}

/** A step's ids are present and bounded, else INVALID_REQUEST naming the field (`items[2].call.step.run_id`). */
export function checkStep(call: CallRequest, field: string): void {
  const problem = call.step === undefined ? undefined : stepProblem(call.step);
  if (problem) throw invalidRequest(`${field}.step.${problem.field}`, problem.message);
}

/**
 * What a stepped call is held under (its arguments as the call's one parse gave them);
 * undefined for a call without a step (every such call is a new decision).
 */
export function stepAsk(call: CallRequest, parsed: ParsedArguments): StepAsk | undefined {
  if (call.step === undefined) return undefined;
  const fingerprint = stepFingerprint({
    toolName: call.toolName,
    actionId: call.actionId,
    arguments: parsed.ok
      ? { ok: true, value: parsed.value }
      : { ok: false, text: call.argumentsJson },
    ...(call.target === undefined ? {} : { target: call.target }),
  });
  return {
    runId: call.step.runId,
    stepKey: stepKey(call.step),
    fingerprint,
    presentsApproval: (call.approvalId ?? "") !== "",
  };
}

/** The slot a decision claims for its step, with the verdict (and an allow's receipt) a retry will be answered. */
export function stepSlot(ask: StepAsk, verdict: Verdict, receipt: string | undefined): StepSlot {
  return {
    runId: ask.runId,
    stepKey: ask.stepKey,
    fingerprint: ask.fingerprint,
    verdictJson: JSON.stringify(verdict),
    ...(receipt === undefined ? {} : { receipt }),
    ...(ask.presentsApproval ? { supersedesPending: true } : {}),
  };
}

/** A held require_approval asked again with an approval is decided again (the approved call may now run once); anything else held is answered. */
export function redecides(held: HeldStep, ask: StepAsk): boolean {
  return held.decision === "require_approval" && ask.presentsApproval;
}

/** How a held step answers a call: the verdict already given, or a deny that is a new decision (recorded without taking the step). */
export type HeldAnswer =
  | {
      readonly kind: "replay";
      readonly verdict: Verdict;
      readonly decisionId: string;
      readonly receipt?: string;
    }
  | { readonly kind: "deny"; readonly verdict: Verdict };

/**
 * The answer of a step already decided. Another call under the step (other names, arguments or
 * target) is STEP_CONFLICT: a step is decided once. The same call is answered the held verdict,
 * decision id and receipt, consuming nothing — unless the policy in force has since withdrawn the
 * grant or the action, which a retry never outlives (POLICY_WITHDRAWN). The token was checked
 * before (an expired or revoked grant is denied as such, never replayed).
 */
export function answerHeld(
  held: HeldStep,
  ask: StepAsk,
  call: CallRequest,
  grant: TaskGrant,
  policy: Policy,
): HeldAnswer {
  const deny = (code: "STEP_CONFLICT" | "POLICY_WITHDRAWN", message: string): HeldAnswer => ({
    kind: "deny",
    verdict: {
      decision: "deny",
      reason: { code, message },
      callId: call.callId,
      actionId: "",
      toolName: call.toolName,
      callDigest: "",
    },
  });
  if (held.fingerprint !== ask.fingerprint) {
    return deny(
      "STEP_CONFLICT",
      "This step of the run was already decided for a different call; a step is decided once. Do not run this call.",
    );
  }
  const given = heldVerdict(held);
  const w = withdrawal(grant, policy);
  if (w.grant !== undefined || (given.decision !== "deny" && w.actions.has(given.actionId))) {
    return deny(
      "POLICY_WITHDRAWN",
      "The authority behind this step has been withdrawn by policy since it was decided. Do not run it.",
    );
  }
  return {
    kind: "replay",
    verdict: given,
    decisionId: held.decisionId,
    ...(held.receipt === undefined ? {} : { receipt: held.receipt }),
  };
}

/** The verdict a step holds, as committed: an allow the commit refused reads back as that deny. */
function heldVerdict(held: HeldStep): Verdict {
  let parsed: unknown;
  try {
    parsed = JSON.parse(held.verdictJson);
  } catch (err) {
    throw new StoreError("CORRUPT", `step of decision ${held.decisionId}: unreadable verdict`, {
      cause: err,
    });
  }
  if (typeof parsed !== "object" || parsed === null)
    throw new StoreError("CORRUPT", `step of decision ${held.decisionId}: unreadable verdict`);
  const verdict = parsed as Verdict;
  if (verdict.decision === held.decision) return verdict;
  if (held.decision === "deny" && held.reasonCode !== undefined && isRefusal(held.reasonCode))
    return refusedVerdict(verdict, held.reasonCode);
  throw new StoreError(
    "CORRUPT",
    `step of decision ${held.decisionId}: its verdict disagrees with the decision`,
  );
}

const REFUSALS: ReadonlySet<string> = new Set<CommitRefusalCode>([
  "LIMIT_EXCEEDED",
  "APPROVAL_CONSUMED",
  "APPROVAL_EXPIRED",
]);

function isRefusal(code: string): code is CommitRefusalCode {
  return REFUSALS.has(code);
}
