import type { TaskGrant } from "../core/grant.js";
import type { CallRequest } from "../core/call-request.js";
import type { Verdict } from "../core/verdict.js";
import type { BudgetLimits, HeldStep } from "../store/port.js";
import { recordDecision } from "../telemetry/instruments.js";
import { traced } from "../telemetry/tracing.js";
import type { AuthorityContext } from "./context.js";
import { invalidRequest } from "./errors.js";
import { DEFAULT_AUTHORITY_LIMITS, type AuthorityLimits } from "./limits.js";
import { loadAncestors, loadGrant, type GrantCheck } from "./load-grant.js";
import {
  approvalStep,
  commitStep,
  decideStep,
  loadApproval,
  signStep,
  type Loaded,
} from "./pipeline-steps.js";
import { answerHeld, checkStep, redecides, stepAsk, stepSlot, type StepAsk } from "./steps.js";
import { loadDelegatedGrant } from "./target-grant.js";

/** A verdict with what the shell added: the decision id it was recorded under and, on allow, the receipt. */
export interface Decided {
  readonly verdict: Verdict;
  readonly decisionId: string;
  readonly receipt?: string;
}

/** Authorize one call under a grant token. */
export interface AuthorizeRequest {
  readonly grantToken: string;
  readonly call: CallRequest;
}

/** Authorize many calls under one grant token; verdicts come back in call order. */
export interface AuthorizeBatchRequest {
  readonly grantToken: string;
  readonly calls: readonly CallRequest[];
}

export interface RequestOptions {
  /**
   * Asked between steps: throws once the caller has gone (cancelled, past its deadline), and the
   * work stops there. An AbortSignal will do; the server passes its call's cheaper check.
   */
  readonly signal?: Pick<AbortSignal, "throwIfAborted">;
  /** The authenticated caller's principal, recorded with each decision (and its audit record). */
  readonly caller?: string;
}

/** Authorize: one call, one verdict. A bad token is a deny verdict, not an error. */
export async function authorize(
  ctx: AuthorityContext,
  req: AuthorizeRequest,
  options: RequestOptions = {},
): Promise<Decided> {
  checkCall(req.call, "call");
  const [decided] = await pipeline(ctx, req.grantToken, [req.call], options);
  return decided as Decided;
}

/**
 * BatchAuthorize: every call is decided against one catalog/policy version and one token check,
 * in order; once the caller has gone no further call is decided, recorded or signed.
 */
export async function authorizeBatch(
  ctx: AuthorityContext,
  req: AuthorizeBatchRequest,
  options: RequestOptions = {},
): Promise<Decided[]> {
  if (req.calls.length === 0) throw invalidRequest("items", "at least one call is required");
  if (req.calls.length > ctx.maxBatch)
    throw invalidRequest("items", `at most ${ctx.maxBatch} calls per batch`);
  req.calls.forEach((call, i) => checkCall(call, `items[${i}].call`));
  return pipeline(ctx, req.grantToken, req.calls, options);
}

/** Every call needs an id and a name; the message names the field, e.g. `items[2].call.call_id`. */
function checkCall(call: CallRequest, field: string): void {
  if (call.callId === "") throw invalidRequest(`${field}.call_id`, "is required");
  if (call.toolName === "" && call.actionId === "")
    throw invalidRequest(`${field}.tool_name`, "tool_name or action_id is required");
  checkStep(call, field);
}

/** Calls of a batch decided between two turns of the event loop. */
const YIELD_EVERY = 16;

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * load -> (the call's approval -> decide -> approval -> commit -> sign) per call, in call order
 * (so a batch consumes budget in call order). A failure to decide rejects; it never allows.
 *
 * When the store runs commits in the order they are asked (`commitsInQueueOrder`: SQLite's group
 * commit), a call without a step and without a presented approval does not wait for its commit
 * before the next call is decided: decide does not read budget state, and the store refuses an
 * over-budget allow in queue order inside the unit of work, so the commits of one batch land in
 * one group transaction with the same outcome as one after the other. A stepped call or one that
 * presents an approval keeps the sequential path (its decision reads what earlier commits wrote:
 * the step index, the approval's state).
 */
async function pipeline(
  ctx: AuthorityContext,
  token: string,
  calls: readonly CallRequest[],
  options: RequestOptions,
): Promise<Decided[]> {
  const { signal } = options;
  signal?.throwIfAborted();
  const loaded = await traced("charter.load", () => load(ctx, token, options.caller));
  const limits = ctx.limits ?? DEFAULT_AUTHORITY_LIMITS;
  const out: Promise<Decided>[] = [];
  // Resolves once the last queued call's commit has been asked of the store: commits are asked in call order.
  let issued: Promise<void> = Promise.resolve();
  for (const [i, call] of calls.entries()) {
    // A long batch lets other requests run between slices, so one caller cannot hold the event loop.
    if (i > 0 && i % YIELD_EVERY === 0) await yieldToEventLoop();
    signal?.throwIfAborted();
    const ask = loaded.check.ok ? stepAsk(call, limits) : undefined;
    if (ctx.commitsInQueueOrder === true && ask === undefined && (call.approvalId ?? "") === "") {
      const queued = decideAndCommit(ctx, loaded, call, limits, issued, signal);
      issued = queued.issued;
      // Awaited below with the others; a rejection while the loop still runs is not left unhandled.
      queued.decided.catch(() => undefined);
      out.push(queued.decided);
    } else {
      await issued;
      out.push(Promise.resolve(await decideInOrder(ctx, loaded, call, ask, limits, signal)));
    }
  }
  return Promise.all(out);
}

/**
 * One call without a step or a presented approval: decided at once, its commit asked of the store
 * once the previous call's has been (`after`; `issued` resolves when this one's has), and its
 * receipt signed while the commit is made durable (`receiptAhead`), handed out once the commit
 * says allow.
 */
function decideAndCommit(
  ctx: AuthorityContext,
  loaded: Loaded,
  call: CallRequest,
  limits: AuthorityLimits,
  after: Promise<void>,
  signal?: RequestOptions["signal"],
): { readonly decided: Promise<Decided>; readonly issued: Promise<void> } {
  let issue = () => {};
  const issued = new Promise<void>((resolve) => (issue = resolve));
  const decided = (async () => {
    try {
      const delegatedGrant = await loadDelegatedGrant(ctx, loaded.check, call, loaded.now);
      const decided = traced("charter.decide", () =>
        decideStep(loaded, call, undefined, limits, delegatedGrant),
      );
      const pending = await traced("charter.approval", () => approvalStep(ctx, loaded, decided));
      const decisionId = ctx.newId("dec");
      await after;
      // The store queues the unit when asked (synchronously), so the next call may ask for its own.
      const committing = traced("charter.commit", () =>
        commitStep(ctx, loaded, pending, decisionId),
      );
      issue();
      const ahead = receiptAhead(ctx, loaded, pending, decisionId, decided.argumentsDigest, signal);
      // Without a step nothing is held: the commit answers a verdict.
      const { verdict } = (await committing) as { readonly verdict: Verdict };
      return await signed(
        ctx,
        loaded,
        verdict,
        decisionId,
        decided.argumentsDigest,
        signal,
        await ahead.for(verdict),
      );
    } finally {
      issue();
    }
  })();
  return { decided, issued };
}

/** One call decided after the previous one is committed: a stepped call, or one that presents an approval. */
async function decideInOrder(
  ctx: AuthorityContext,
  loaded: Loaded,
  call: CallRequest,
  ask: StepAsk | undefined,
  limits: AuthorityLimits,
  signal?: RequestOptions["signal"],
): Promise<Decided> {
  // Only a verified grant can be allowed, so an allow always has its grant at hand.
  const grant = loaded.check.ok ? loaded.check.grant : undefined;
  // A step already decided is answered from the step index, before anything is decided or consumed.
  const held = ask && grant ? await ctx.store.getStep(grant.id, ask.runId, ask.stepKey) : undefined;
  if (ask && held && !redecides(held, ask)) return heldStep(ctx, loaded, call, ask, held);
  const approval = await loadApproval(ctx, loaded, call);
  const delegatedGrant = await loadDelegatedGrant(ctx, loaded.check, call, loaded.now);
  const decided = traced("charter.decide", () =>
    decideStep(loaded, call, approval, limits, delegatedGrant),
  );
  const { argumentsDigest } = decided;
  const pending = await traced("charter.approval", () => approvalStep(ctx, loaded, decided));
  const decisionId = ctx.newId("dec");
  // A stepped allow is signed before its commit: the step keeps the receipt, so a retry is answered the same one.
  const early =
    ask && grant && pending.decision === "allow"
      ? await traced("charter.sign", () =>
          signStep(ctx, loaded, grant, pending, decisionId, argumentsDigest),
        )
      : undefined;
  const committing = traced("charter.commit", () =>
    commitStep(
      ctx,
      loaded,
      pending,
      decisionId,
      ask && { ask, slot: stepSlot(ask, pending, early) },
    ),
  );
  // Neither stepped nor presenting an approval (a store that commits one call after the other): signed during the commit.
  const ahead =
    ask === undefined && pending.approvalId === undefined
      ? receiptAhead(ctx, loaded, pending, decisionId, argumentsDigest, signal)
      : NOTHING_AHEAD;
  const committed = await committing;
  // Another replica (or a concurrent retry) decided the step first: its decision is the answer.
  if ("held" in committed) return heldStep(ctx, loaded, call, ask as StepAsk, committed.held);
  return signed(
    ctx,
    loaded,
    committed.verdict,
    decisionId,
    argumentsDigest,
    signal,
    early ?? (await ahead.for(committed.verdict)),
  );
}

/** A receipt signed ahead of its commit, handed out only for the very verdict it was signed for. */
interface ReceiptAhead {
  /** The receipt when `committed` is the allow it was signed for (the commit refused nothing); otherwise undefined. */
  for(committed: Verdict): Promise<string | undefined>;
}

const NOTHING_AHEAD: ReceiptAhead = { for: async () => undefined };

/**
 * Grants whose allow a commit has refused (their budget, or an ancestor's, was spent): their
 * receipts are no longer signed ahead. A budget only fills, so such a grant's allows go on being
 * refused, and each would cost a signature that is thrown away. Keyed by the verified grant
 * object, which the token verifier keeps once per cached token, so an entry goes with its token.
 */
const refusedGrants = new WeakSet<TaskGrant>();

/**
 * The receipt of a pending allow, signed now, while its commit is made durable: the signature and
 * the flush wait on the thread pool side by side instead of one after the other (at one call in
 * flight, Authorize's p50 about 13 % lower; docs/architecture.md, "Receipts"). It leaves
 * only through `for` — when the commit answered this very allow, not a refusal — and then only if
 * the caller has not gone (`signed` asks again); otherwise it is dropped unseen. Nothing is signed
 * ahead for a caller that has gone already, nor for a grant a commit has refused before
 * (`refusedGrants`); a refusal met here puts the grant there.
 */
function receiptAhead(
  ctx: AuthorityContext,
  loaded: Loaded,
  pending: Verdict,
  decisionId: string,
  argumentsDigest: string,
  signal: RequestOptions["signal"],
): ReceiptAhead {
  const grant = loaded.check.ok ? loaded.check.grant : undefined;
  if (pending.decision !== "allow" || grant === undefined) return NOTHING_AHEAD;
  const refused = (committed: Verdict) => {
    if (committed.decision === "allow") return false;
    refusedGrants.add(grant);
    return true;
  };
  if (refusedGrants.has(grant) || isGone(signal))
    return { for: async (committed) => void refused(committed) };
  const receipt = traced("charter.sign", () =>
    signStep(ctx, loaded, grant, pending, decisionId, argumentsDigest),
  );
  // A commit that fails first leaves the receipt unasked: its failure, if any, is not left unhandled.
  receipt.catch(() => undefined);
  return {
    for: async (committed) => (refused(committed) || committed !== pending ? undefined : receipt),
  };
}

function isGone(signal: RequestOptions["signal"]): boolean {
  try {
    signal?.throwIfAborted();
    return false;
  } catch {
    return true;
  }
}

/** A committed verdict, counted; an allow with its receipt (signed now unless `early`: before or during its commit), unless the caller has gone. */
async function signed(
  ctx: AuthorityContext,
  loaded: Loaded,
  verdict: Verdict,
  decisionId: string,
  argumentsDigest: string,
  signal?: RequestOptions["signal"],
  early?: string,
): Promise<Decided> {
  recordDecision(verdict.decision, verdict.reason?.code);
  signal?.throwIfAborted();
  const grant = loaded.check.ok ? loaded.check.grant : undefined;
  if (verdict.decision !== "allow" || !grant) return { verdict, decisionId };
  return {
    verdict,
    decisionId,
    receipt:
      early ??
      (await traced("charter.sign", () =>
        signStep(ctx, loaded, grant, verdict, decisionId, argumentsDigest),
      )),
  };
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
  call: CallRequest,
  ask: StepAsk,
  held: HeldStep,
): Promise<Decided> {
  const grant = (loaded.check as Extract<GrantCheck, { ok: true }>).grant;
  const answer = answerHeld(held, ask, call, grant, loaded.policySet.policy);
  if (answer.kind === "replay")
    return answer.receipt === undefined
      ? { verdict: answer.verdict, decisionId: answer.decisionId }
      : answer;
  const decisionId = ctx.newId("dec");
  const committed = await commitStep(ctx, loaded, answer.verdict, decisionId, { ask });
  const verdict = "held" in committed ? answer.verdict : committed.verdict;
  // A replay is not a new decision; a conflicting call is (recorded, and counted).
  recordDecision(verdict.decision, verdict.reason?.code);
  return { verdict, decisionId };
}

/**
 * Load: the clock and the catalog/policy pair read once, the token checked once (with
 * revocation), and the limits of the grant and of every ancestor that sets one (read from the
 * store: a sub-agent's calls are charged to its ancestors' budgets too).
 */
async function load(
  ctx: AuthorityContext,
  token: string,
  caller: string | undefined,
): Promise<Loaded> {
  const now = ctx.now();
  const policySet = ctx.policySet();
  const check = await loadGrant(ctx, token, now);
  if (!check.ok) return { now, policySet, check, budget: [], caller };
  const ancestors = await loadAncestors(ctx, check.grant);
  return {
    now,
    policySet,
    check,
    budget: [check.grant, ...ancestors.reverse()].flatMap(limitsOf),
    caller,
  };
}

function limitsOf(g: TaskGrant): BudgetLimits[] {
  const { maxCalls, maxCallsPerAction } = g.limits;
  if (maxCalls === undefined && maxCallsPerAction === undefined) return [];
  return [
    {
      grantId: g.id,
      ...(maxCalls === undefined ? {} : { maxCalls }),
      ...(maxCallsPerAction === undefined ? {} : { maxCallsPerAction }),
    },
  ];
}
