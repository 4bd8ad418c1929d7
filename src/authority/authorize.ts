import type { CallRequest } from "../core/call-request.js";
import type { TaskGrant } from "../core/grant.js";
import type { BudgetLimits } from "../store/port.js";
import { traced } from "../telemetry/tracing.js";
import { admitCall } from "./admit.js";
import { runCall, type Decided } from "./call-pipeline.js";
import type { AuthorityContext } from "./context.js";
import { invalidRequest } from "./errors.js";
import { DEFAULT_AUTHORITY_LIMITS } from "./limits.js";
import { loadAncestors, loadGrantInForce } from "./load-grant.js";
import type { Loaded } from "./pipeline-steps.js";
import type { CallerSignal } from "./receipt-ahead.js";
import { checkStep } from "./steps.js";
import { shadowGrantFor } from "./shadow.js";

export type { Decided } from "./call-pipeline.js";

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
  readonly signal?: CallerSignal;
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
 * load once -> each call admitted (`admitCall`: parsed once) and run through the one call
 * pipeline (`runCall`), in call order: commits are asked in call order, so a batch consumes
 * budget in call order.
 *
 * When the store commits units in the order they are asked (`traits.commitsInQueueOrder`:
 * SQLite's group commit), a call that reads nothing an earlier call's commit writes — no step,
 * no presented approval — does not wait for the previous call to finish: decide does not read
 * budget state, and the store refuses an over-budget allow in queue order inside the unit of
 * work, so the commits of one batch land in one group transaction with the same outcome as one
 * after the other. Any other call, and every call on any other store, runs once the previous one
 * has finished.
 */
async function pipeline(
  ctx: AuthorityContext,
  token: string,
  requests: readonly CallRequest[],
  options: RequestOptions,
): Promise<Decided[]> {
  const { signal } = options;
  signal?.throwIfAborted();
  const loaded = await traced("charter.load", () => load(ctx, token, options.caller));
  const limits = ctx.limits ?? DEFAULT_AUTHORITY_LIMITS;
  const queued = ctx.store.traits.commitsInQueueOrder;
  const out: Promise<Decided>[] = [];
  let asked: Promise<void> = Promise.resolve();
  for (const [i, request] of requests.entries()) {
    // A long batch lets other requests run between slices, so one caller cannot hold the event loop.
    if (i > 0 && i % YIELD_EVERY === 0) await yieldToEventLoop();
    signal?.throwIfAborted();
    const call = admitCall(ctx, request, limits);
    const run = runCall(ctx, loaded, call, limits, { after: asked, signal });
    const readsEarlierCommits =
      (loaded.check.ok && call.ask !== undefined) || call.presentsApproval;
    if (queued && !readsEarlierCommits) {
      asked = run.asked;
      // Awaited below with the others; a rejection while the loop still runs is not left unhandled.
      run.decided.catch(() => undefined);
      out.push(run.decided);
    } else {
      out.push(Promise.resolve(await run.decided));
    }
  }
  return Promise.all(out);
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
  const check = await loadGrantInForce(ctx, token, now, policySet.policy);
  if (!check.ok) return { now, policySet, check, budget: [], caller };
  const ancestors = await loadAncestors(ctx, check.grant);
  const loaded: Loaded = {
    now,
    policySet,
    check,
    budget: [check.grant, ...ancestors.reverse()].flatMap(limitsOf),
    caller,
    runExpiresAt: Math.max(check.grant.expiresAt, ...ancestors.map((a) => a.expiresAt)),
  };
  const { shadow } = policySet;
  if (shadow === undefined) return loaded;
  return {
    ...loaded,
    shadowGrant: await shadowGrantFor(ctx, policySet, shadow, check.grant, ancestors),
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
