import { argumentsDigest } from "../core/digest.js";
import { decideInForce } from "../core/withdraw.js";
import type { TaskGrant } from "../core/grant.js";
import { parseCallArguments, type CallRequest } from "../core/call-request.js";
import type { ToolCall, Verdict } from "../core/verdict.js";
import type { DecisionRecord } from "../store/port.js";
import { signReceipt } from "../token/index.js";
import type { AuthorityContext, PolicySet } from "./context.js";
import { invalidRequest } from "./errors.js";
import { DEFAULT_AUTHORITY_LIMITS, type AuthorityLimits } from "./limits.js";
import { loadGrant, type GrantCheck } from "./load-grant.js";

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

/** Aborted when the caller has gone (cancelled, past its deadline) or the server is stopping. */
export interface RequestOptions {
  readonly signal?: AbortSignal;
}

/** Authorize: one call, one verdict. A bad token is a deny verdict, not an error. */
export async function authorize(ctx: AuthorityContext, req: AuthorizeRequest, options: RequestOptions = {}): Promise<Decided> {
  checkCall(req.call, "call");
  const [decided] = await pipeline(ctx, req.grantToken, [req.call], options.signal);
  return decided as Decided;
}

/**
 * BatchAuthorize: every call is decided against one catalog/policy version and one token check,
 * in order; once the caller has gone no further call is decided, recorded or signed.
 */
export async function authorizeBatch(ctx: AuthorityContext, req: AuthorizeBatchRequest, options: RequestOptions = {}): Promise<Decided[]> {
  if (req.calls.length === 0) throw invalidRequest("items", "at least one call is required");
  if (req.calls.length > ctx.maxBatch) throw invalidRequest("items", `at most ${ctx.maxBatch} calls per batch`);
  req.calls.forEach((call, i) => checkCall(call, `items[${i}].call`));
  return pipeline(ctx, req.grantToken, req.calls, options.signal);
}

/** Every call needs an id and a name; the message names the field, e.g. `items[2].call.call_id`. */
function checkCall(call: CallRequest, field: string): void {
  if (call.callId === "") throw invalidRequest(`${field}.call_id`, "is required");
  if (call.toolName === "" && call.actionId === "") throw invalidRequest(`${field}.tool_name`, "tool_name or action_id is required");
}

/** Calls of a batch decided between two turns of the event loop. */
const YIELD_EVERY = 16;

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** What the load step read once for a whole request. */
interface Loaded {
  readonly now: number;
  readonly policySet: PolicySet;
  readonly check: GrantCheck;
}

/** load -> (decide -> commit -> sign) per call. A failure to decide rejects; it never allows. */
async function pipeline(ctx: AuthorityContext, token: string, calls: readonly CallRequest[], signal: AbortSignal | undefined): Promise<Decided[]> {
  signal?.throwIfAborted();
  const loaded = await load(ctx, token);
  const limits = ctx.limits ?? DEFAULT_AUTHORITY_LIMITS;
  const out: Decided[] = [];
  for (const [i, call] of calls.entries()) {
    // A long batch lets other requests run between slices, so one caller cannot hold the event loop.
    if (i > 0 && i % YIELD_EVERY === 0) await yieldToEventLoop();
    signal?.throwIfAborted();
    const { verdict, argumentsDigest } = decideStep(loaded, call, limits);
    const decisionId = ctx.newId("dec");
    await commitStep(ctx, loaded, verdict, decisionId);
    signal?.throwIfAborted();
    // Only a verified grant can be allowed, so an allow always has its grant at hand.
    const grant = loaded.check.ok ? loaded.check.grant : undefined;
    out.push(
      verdict.decision === "allow" && grant
        ? { verdict, decisionId, receipt: await signStep(ctx, loaded, grant, verdict, decisionId, argumentsDigest) }
        : { verdict, decisionId },
    );
  }
  return out;
}

/** Load: the clock and the catalog/policy pair read once, the token checked once (with revocation). */
async function load(ctx: AuthorityContext, token: string): Promise<Loaded> {
  const now = ctx.now();
  const policySet = ctx.policySet();
  return { now, policySet, check: await loadGrant(ctx, token, now) };
}

/**
 * Decide: pure. The arguments are parsed here, once and strictly; that value is what the core
 * checks and digests, and its canonical form's digest is what the receipt binds. It is decided
 * under the policy in force (the kill switch: a suspended source or a new deny stops an
 * outstanding grant at once; nothing the policy adds widens it).
 */
function decideStep(loaded: Loaded, req: CallRequest, limits: AuthorityLimits): { verdict: Verdict; argumentsDigest: string } {
  const names = { callId: req.callId, actionId: "", toolName: req.toolName, callDigest: "" };
  const refused = (verdict: Verdict) => ({ verdict, argumentsDigest: "" });
  if (!loaded.check.ok) return refused({ decision: "deny", reason: { code: loaded.check.code, message: loaded.check.message }, ...names });
  const args = parseCallArguments(req.argumentsJson, limits.arguments);
  if (!args.ok) return refused({ decision: "deny", reason: { code: "INVALID_ARGUMENTS", message: args.message }, ...names });
  const call: ToolCall = {
    callId: req.callId,
    arguments: args.value,
    ...(req.toolName === "" ? {} : { toolName: req.toolName }),
    ...(req.actionId === "" ? {} : { actionId: req.actionId }),
  };
  // The policy read once by the load step: what it has withdrawn since the grant was issued is denied (POLICY_WITHDRAWN).
  const { catalog, policy } = loaded.policySet;
  const verdict = decideInForce(loaded.check.grant, catalog, policy, call, { now: loaded.now, maxArgumentDepth: limits.arguments.maxDepth });
  return { verdict, argumentsDigest: verdict.decision === "allow" ? argumentsDigest(args.value) : "" };
}

/** Commit: the decision's record, durable in the store before the answer leaves. */
async function commitStep(ctx: AuthorityContext, loaded: Loaded, verdict: Verdict, decisionId: string): Promise<void> {
  await ctx.store.commitDecision(decisionRecord(loaded, verdict, decisionId));
}

/** What is recorded of a decision: ids, names, digests and codes; never argument values or the token. */
function decisionRecord(loaded: Loaded, verdict: Verdict, decisionId: string): DecisionRecord {
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
  };
}

/** Sign: the receipt a tool service verifies offline before it runs the call. */
async function signStep(ctx: AuthorityContext, loaded: Loaded, grant: TaskGrant, verdict: Verdict, decisionId: string, argsCanonicalDigest: string): Promise<string> {
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
    },
    ctx.ring,
    { issuer: ctx.tokens.issuer, audience: ctx.tokens.audience, now: loaded.now, ttlSeconds: ctx.tokens.receiptTtlSeconds },
  );
}
