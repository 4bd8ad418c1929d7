import type { Verdict } from "../core/verdict.js";
import type { HeldStep } from "../store/port.js";
import { recordDecision } from "../telemetry/instruments.js";
import { traced } from "../telemetry/tracing.js";
import type { AdmittedCall } from "./admit.js";
import type { AuthorityContext } from "./context.js";
import { retainedInputs } from "./decision-inputs.js";
import type { AuthorityLimits } from "./limits.js";
import type { GrantCheck } from "./load-grant.js";
import { approvalStep, heldStepApproval, loadApproval } from "./approval-step.js";
import { commitStep, decideStep, signStep, type Loaded } from "./pipeline-steps.js";
import { NOTHING_AHEAD, receiptAhead, type CallerSignal } from "./receipt-ahead.js";
import { answerHeld, redecides, stepSlot, type StepAsk } from "./steps.js";
import { loadDelegatedGrant } from "./target-grant.js";
import { readRunFor, runEffectFor } from "./run-state.js";
import { StoreError } from "../store/port.js";

/** A verdict with what the shell added: the decision id it was recorded under and, on allow, the receipt. */
export interface Decided {
  readonly verdict: Verdict;
  readonly decisionId: string;
  readonly receipt?: string;
}

/** Where a call's commit stands among the calls of its request. */
export interface CallOrder {
  /** Resolves once the previous call's commit has been asked of the store: commits are asked in call order. */
  readonly after: Promise<void>;
  readonly signal?: CallerSignal | undefined;
}

/** A call on its way: its answer, and when its commit has been asked (the next call may then ask). */
export interface RunningCall {
  readonly decided: Promise<Decided>;
  readonly asked: Promise<void>;
}

/**
 * The pipeline of one call, the same whichever door it came through and however its request is
 * ordered: its step (a step already decided answers at once), the approval it presents, decide,
 * its approval record, then — once `order.after` says the previous call's commit has been asked —
 * its commit, with an allow's receipt signed while the commit is made durable (a stepped allow is
 * signed before: its step keeps the receipt), handed out only for the allow the commit answered.
 * A failure to decide rejects; it never allows.
 */
export function runCall(
  ctx: AuthorityContext,
  loaded: Loaded,
  call: AdmittedCall,
  limits: AuthorityLimits,
  order: CallOrder,
): RunningCall {
  let ask = () => {};
  const asked = new Promise<void>((resolve) => (ask = resolve));
  const decided = (async () => {
    try {
      return await decideAndCommit(ctx, loaded, call, limits, order, ask);
    } finally {
      ask();
    }
  })();
  return { decided, asked };
}

async function decideAndCommit(
  ctx: AuthorityContext,
  loaded: Loaded,
  call: AdmittedCall,
  limits: AuthorityLimits,
  { after, signal }: CallOrder,
  asked: () => void,
): Promise<Decided> {
  // Only a verified grant can be allowed, so an allow always has its grant at hand.
  const grant = loaded.check.ok ? loaded.check.grant : undefined;
  const step = grant ? call.ask : undefined;
  // A step already decided is answered from the step index, before anything is decided or consumed.
  const held =
    step && grant ? await ctx.store.getStep(grant.id, step.runId, step.stepKey) : undefined;
  // A held require_approval whose approval has since been approved is that call's to take.
  const answered = step && held && !redecides(held, step) ? held : undefined;
  const approvedHeld = answered && (await heldStepApproval(ctx, answered));
  if (step && answered && approvedHeld === undefined)
    return heldStep(ctx, loaded, call, step, answered);
  const ask = step && approvedHeld ? { ...step, presentsApproval: true } : step;
  // The approval in hand: the one presented, or the one found approved for this exact call.
  let approval =
    approvedHeld ?? (call.presentsApproval ? await loadApproval(ctx, loaded, call) : undefined);
  const delegatedGrant = await loadDelegatedGrant(ctx, loaded.check, call.request, loaded.now);
  const { catalog } = loaded.policySet;
  const { decisionId } = call;
  // Decided on the run as read now; when the commit finds the run changed meanwhile (another
  // call of the run, or of the window, committed first), decided again on a fresh read.
  for (let attempt = 1; ; attempt++) {
    const run = grant && (await readRunFor(ctx, grant, catalog, call, loaded.now));
    const decide = () =>
      traced("charter.decide", () =>
        decideStep(loaded, call, approval, limits, delegatedGrant, run?.view),
      );
    let decided = decide();
    const approvalAsked = await traced("charter.approval", () =>
      approvalStep(ctx, loaded, call, decided.verdict),
    );
    // The call was approved without presenting the approval: decided again with it in hand.
    if (approvalAsked.approved !== undefined) {
      approval = approvalAsked.approved;
      decided = decide();
    }
    const pending = approvalAsked.approved === undefined ? approvalAsked.verdict : decided.verdict;
    const { argumentsDigest } = decided;
    const early =
      step && grant && pending.decision === "allow"
        ? await traced("charter.sign", () =>
            signStep(ctx, loaded, grant, pending, decisionId, argumentsDigest),
          )
        : undefined;
    if (attempt === 1) await after;
    const effect =
      grant &&
      runEffectFor(grant, catalog, call, run, pending, loaded.runExpiresAt ?? grant.expiresAt);
    // The store queues the unit when asked (synchronously), so the next call may ask for its own.
    const committing = traced("charter.commit", () =>
      commitStep(
        ctx,
        loaded,
        pending,
        decisionId,
        ask && { ask, slot: stepSlot(ask, pending, early) },
        effect,
        retainedInputs(ctx, decisionId, call, run?.view),
        decided.shadowFlip,
      ),
    );
    asked();
    // Neither stepped nor consuming an approval: the receipt is signed while the commit is made durable.
    const ahead =
      step === undefined && pending.approvalId === undefined && effect === undefined
        ? receiptAhead(ctx, loaded, pending, decisionId, argumentsDigest, signal)
        : NOTHING_AHEAD;
    const committed = await committing;
    if ("runChanged" in committed) {
      if (attempt >= MAX_RUN_ATTEMPTS)
        throw new StoreError(
          "UNAVAILABLE",
          `the run changed under each of ${MAX_RUN_ATTEMPTS} decisions of call ${call.request.callId} (${committed.runChanged})`,
        );
      signal?.throwIfAborted();
      continue;
    }
    // Another replica (or a concurrent retry) decided the step first: its decision is the answer.
    if ("held" in committed) return heldStep(ctx, loaded, call, ask as StepAsk, committed.held);
    const receipt = early ?? (await ahead.for(committed.verdict));
    return signed(ctx, loaded, committed.verdict, decisionId, argumentsDigest, signal, receipt);
  }
}

/**
 * How many times one call is decided again because its run changed before its commit. Labels
 * only grow and a window's room only shrinks while calls are in flight, so a call decided again
 * converges; one that does not within this many is not decided (UNAVAILABLE), never allowed.
 */
const MAX_RUN_ATTEMPTS = 16;

/** A committed verdict, counted; an allow with its receipt (signed now unless `early`: before or during its commit), unless the caller has gone. */
async function signed(
  ctx: AuthorityContext,
  loaded: Loaded,
  verdict: Verdict,
  decisionId: string,
  argumentsDigest: string,
  signal: CallerSignal | undefined,
  early: string | undefined,
): Promise<Decided> {
  recordDecision(verdict.decision, verdict.reason?.code);
  signal?.throwIfAborted();
  const grant = loaded.check.ok ? loaded.check.grant : undefined;
  if (verdict.decision !== "allow" || !grant) return { verdict, decisionId };
  const receipt =
    early ??
    (await traced("charter.sign", () =>
      signStep(ctx, loaded, grant, verdict, decisionId, argumentsDigest),
    ));
  return { verdict, decisionId, receipt };
}

/**
 * A step decided already answers the call: a retry gets the held verdict, decision id and
 * receipt, and nothing is consumed or recorded; a different call under the step (or one the
 * policy has since withdrawn) is a deny recorded as a new decision, keyed by run and step, that
 * leaves the step's decision standing.
 */
async function heldStep(
  ctx: AuthorityContext,
  loaded: Loaded,
  call: AdmittedCall,
  ask: StepAsk,
  held: HeldStep,
): Promise<Decided> {
  const grant = (loaded.check as Extract<GrantCheck, { ok: true }>).grant;
  const answer = answerHeld(held, ask, call.request, grant, loaded.policySet.policy);
  if (answer.kind === "replay")
    return answer.receipt === undefined
      ? { verdict: answer.verdict, decisionId: answer.decisionId }
      : answer;
  const { decisionId } = call;
  const committed = await commitStep(ctx, loaded, answer.verdict, decisionId, { ask });
  // A deny of a conflicting step has no run effect, so the run cannot have changed under it.
  const verdict = "verdict" in committed ? committed.verdict : answer.verdict;
  // A replay is not a new decision; a conflicting call is (recorded, and counted).
  recordDecision(verdict.decision, verdict.reason?.code);
  return { verdict, decisionId };
}
