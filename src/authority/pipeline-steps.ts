import { withCallDigest } from "../core/decide.js";
import { assessInForce } from "../core/withdraw.js";
import type { TaskGrant } from "../core/grant.js";
import type { ApprovalRecord, ToolCall, Verdict } from "../core/verdict.js";
import type { RunView } from "../core/run.js";
import { shadowFlipOf, type ShadowFlip, type ShadowGrant } from "../core/shadow-policy.js";
import type {
  BudgetLimits,
  CommitOutcome,
  DecisionEffects,
  DecisionRecord,
  HeldStep,
  RunEffect,
} from "../store/port.js";
import { signReceipt } from "../token/index.js";
import type { AdmittedCall } from "./admit.js";
import { refusedVerdict } from "./commit-refusal.js";
import type { AuthorityContext, PolicySet } from "./context.js";
import type { AuthorityLimits } from "./limits.js";
import type { GrantCheck } from "./load-grant.js";
import { nativeSha256Hex } from "./sha256.js";
import { withShadow } from "./shadow.js";
import { recordShadowFlip } from "../telemetry/instruments.js";
import type { StepAsk } from "./steps.js";

// The steps of the Authorize pipeline (`authorize.ts`) for one call: decide, commit, sign (its approval steps: approval-step.ts).

/** What the load step read once for a whole request. */
export interface Loaded {
  readonly now: number;
  readonly policySet: PolicySet;
  readonly check: GrantCheck;
  /** The limits to charge on allow: the calling grant's, then each ancestor's (only those that set one). */
  readonly budget: readonly BudgetLimits[];
  /** Who asked (the authenticated caller's principal), for the records. */
  readonly caller: string | undefined;
  /** When the run rows a call writes may go: the latest expiry of the grant and its ancestors (labels written up the tree live as long as the grants they join). */
  readonly runExpiresAt?: number;
  /** With a shadow policy and a verified grant: the grant recomposed under the shadow policy. */
  readonly shadowGrant?: ShadowGrant;
}

/** One call after the decide step: its verdict and, on allow, the digest the receipt binds. */
export interface DecideResult {
  readonly verdict: Verdict;
  /** The digest of the arguments' canonical form, bound by the receipt ("" unless allowed). */
  readonly argumentsDigest: string;
  /** What the shadow policy decided, where it disagreed with `verdict`. */
  readonly shadowFlip?: ShadowFlip;
}

/**
 * Decide: pure, over the call's one parsed value (`admitCall`): that value is what the core
 * checks, and its digests — made once, with the native hash — are what the decision record, the
 * approval and the receipt carry. It is decided under the policy in force (the kill switch: a
 * suspended source or a new deny stops an outstanding grant at once; nothing the policy adds
 * widens it).
 */
export function decideStep(
  loaded: Loaded,
  call: AdmittedCall,
  approval: ApprovalRecord | undefined,
  limits: AuthorityLimits,
  delegatedGrant?: TaskGrant,
  run?: RunView,
): DecideResult {
  const { request, args } = call;
  const names = {
    callId: request.callId,
    actionId: "",
    toolName: request.toolName,
    callDigest: "",
  };
  const refused = (verdict: Verdict) => ({ verdict, argumentsDigest: "" });
  if (!loaded.check.ok)
    return refused({
      decision: "deny",
      reason: { code: loaded.check.code, message: loaded.check.message },
      ...names,
    });
  if (!args.ok)
    return refused({
      decision: "deny",
      reason: { code: "INVALID_ARGUMENTS", message: args.message },
      ...names,
    });
  const toolCall: ToolCall = {
    callId: request.callId,
    arguments: args.value,
    ...(request.toolName === "" ? {} : { toolName: request.toolName }),
    ...(request.actionId === "" ? {} : { actionId: request.actionId }),
    ...(request.target === undefined ? {} : { target: request.target }),
  };
  // The policy read once by the load step: what it has withdrawn since the grant was issued is denied (POLICY_WITHDRAWN).
  const { catalog, policy } = loaded.policySet;
  const options = {
    now: loaded.now,
    maxArgumentDepth: limits.arguments.maxDepth,
    hash: nativeSha256Hex,
    ...(call.digests ? { digests: call.digests } : {}),
    ...(approval ? { approval } : {}),
    ...(delegatedGrant ? { delegatedGrant } : {}),
    ...(run ? { run } : {}),
  };
  const assessed = assessInForce(loaded.check.grant, catalog, policy, toolCall, options);
  const verdict = withCallDigest(assessed);
  const argumentsDigest = verdict.decision === "allow" ? assessed.argumentsDigest() : "";
  const { shadowGrant } = loaded;
  if (shadowGrant === undefined) return { verdict, argumentsDigest };
  // The same parsed call under the grant as the shadow policy composes it; never the answer.
  const shadowFlip = shadowFlipOf(verdict.decision, shadowGrant, catalog, toolCall, options);
  return shadowFlip === undefined
    ? { verdict, argumentsDigest }
    : { verdict, argumentsDigest, shadowFlip };
}

/**
 * Commit: one unit of work in the store, durable before the answer — an allow's approval
 * consumption and budget charges (the calling grant and every ancestor), the decision record and
 * its audit record. When the store finds the budget spent or the approval used or expired
 * meanwhile, the allow becomes a deny with that reason, before anything is signed. A stepped
 * call's record is keyed by its run and step, and claims the step when `step.slot` is given;
 * when the step is held already, nothing is written and the held decision comes back.
 */
export async function commitStep(
  ctx: AuthorityContext,
  loaded: Loaded,
  verdict: Verdict,
  decisionId: string,
  step?: { readonly ask: StepAsk; readonly slot?: DecisionEffects["step"] },
  run?: RunEffect,
  inputs?: string,
  shadowFlip?: ShadowFlip,
): Promise<
  { readonly verdict: Verdict } | { readonly held: HeldStep } | { readonly runChanged: string }
> {
  const effects: DecisionEffects = {
    ...(verdict.decision === "allow" && loaded.budget.length > 0
      ? { budget: { actionId: verdict.actionId, grants: loaded.budget } }
      : {}),
    ...(verdict.decision === "allow" && verdict.approvalId !== undefined
      ? { approval: { approvalId: verdict.approvalId, callDigest: verdict.callDigest } }
      : {}),
    ...(step?.slot === undefined ? {} : { step: step.slot }),
    ...(run === undefined ? {} : { run }),
    ...(inputs === undefined ? {} : { inputs }),
  };
  const record = decisionRecord(loaded, verdict, decisionId, step?.ask);
  const { shadow } = loaded.policySet;
  const outcome =
    shadow === undefined
      ? await ctx.store.commitDecision(record, effects)
      : await commitShadowed(ctx, withShadow(record, shadow.version, shadowFlip), effects);
  if (outcome.kind === "step_held") return { held: outcome.held };
  if (outcome.kind === "run_changed") return { runChanged: outcome.detail };
  if (effects.approval) ctx.approvalFeed.notify();
  if (outcome.kind === "committed") return { verdict };
  return { verdict: refusedVerdict(verdict, outcome.reasonCode) };
}

/** The commit of a decision recorded with the shadow policy's version; a recorded flip is counted. */
async function commitShadowed(
  ctx: AuthorityContext,
  record: DecisionRecord,
  effects: DecisionEffects,
): Promise<CommitOutcome> {
  const outcome = await ctx.store.commitDecision(record, effects);
  const flip = record.shadowFlip;
  if (flip !== undefined && (outcome.kind === "committed" || outcome.kind === "refused"))
    recordShadowFlip(record.decision, flip.to);
  return outcome;
}

/** What is recorded of a decision: ids, names, digests and codes; never argument values or the token. */
function decisionRecord(
  loaded: Loaded,
  verdict: Verdict,
  decisionId: string,
  step?: StepAsk,
): DecisionRecord {
  const grant: TaskGrant | undefined = loaded.check.ok ? loaded.check.grant : undefined;
  return {
    decisionId,
    decidedAt: loaded.now,
    grantId: grant?.id ?? "",
    rootId: grant?.rootId ?? "",
    subject: grant?.subject ?? "",
    actionId: verdict.actionId,
    toolName: verdict.toolName,
    callId: verdict.callId,
    callDigest: verdict.callDigest,
    decision: verdict.decision,
    ...(verdict.reason ? { reasonCode: verdict.reason.code } : {}),
    ...(verdict.approvalId === undefined ? {} : { approvalId: verdict.approvalId }),
    catalogVersion: loaded.policySet.catalog.version,
    policyVersion: loaded.policySet.policy.version,
    ...(loaded.caller === undefined ? {} : { caller: loaded.caller }),
    ...(step === undefined ? {} : { runId: step.runId, stepKey: step.stepKey }),
    ...(verdict.runLabels === undefined || verdict.runLabels.length === 0
      ? {}
      : { runLabels: verdict.runLabels }),
    ...(verdict.rule === undefined ? {} : { rule: verdict.rule }),
  };
}

/** Sign: the receipt a tool service verifies offline before it runs the call. */
export async function signStep(
  ctx: AuthorityContext,
  loaded: Loaded,
  grant: TaskGrant,
  verdict: Verdict,
  decisionId: string,
  argsCanonicalDigest: string,
): Promise<string> {
  return signReceipt(
    {
      decisionId,
      grantId: grant.id,
      subject: grant.subject,
      actionId: verdict.actionId,
      toolName: verdict.toolName,
      resource: verdict.resource ?? "",
      callId: verdict.callId,
      argsDigest: verdict.callDigest,
      argumentsDigest: argsCanonicalDigest,
      catalogVersion: loaded.policySet.catalog.version,
      ...(verdict.runId === undefined
        ? {}
        : { runId: verdict.runId, runLabels: verdict.runLabels ?? [] }),
    },
    ctx.ring,
    {
      issuer: ctx.tokens.issuer,
      audience: ctx.tokens.audience,
      now: loaded.now,
      ttlSeconds: ctx.tokens.receiptTtlSeconds,
    },
  );
}
