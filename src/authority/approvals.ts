import { recheckCall, type Approval } from "../core/approval.js";
import { summarizeArguments } from "../core/approval-summary.js";
import { answerProblem } from "../core/approvers.js";
import type { CatalogAction } from "../core/catalog.js";
import type { TaskGrant } from "../core/grant.js";
import type { JsonObject } from "../core/json.js";
import { approversFor, type Policy } from "../core/policy.js";
import type { ApprovalStatus, Reason, Verdict } from "../core/verdict.js";
import type { ApprovalDraft, ApprovalEvent } from "../store/port.js";
import type { AuthorityContext } from "./context.js";
import { AuthorityError, invalidRequest } from "./errors.js";
import { notYours, ownerFor, visible } from "./approval-access.js";
import { approvalCursor, pageToken } from "./page-token.js";

/**
 * Who is calling, once caller authentication exists: without the `admin` role, only their own
 * approvals and those of requirements they hold `approve:<requirement>` for.
 */
export interface Actor {
  readonly principal: string;
  readonly roles: readonly string[];
  /** Protected mode's local operator: it has no identity to count, so `decidedBy` names the approver. */
  readonly protectedMode?: true;
}

/**
 * The actor a person signed in as `principal` acts as, outside gRPC (the approvals inbox, a chat
 * action): that principal and no key's roles. What it may see and answer is what the approver
 * directory in force gives that principal (read by each request: it reloads with the policy),
 * besides its own approvals as an owner.
 */
export function approverActor(principal: string): Actor {
  if (principal.trim() === "") throw invalidRequest("principal", "is required");
  return { principal, roles: [] };
}

export const DEFAULT_APPROVAL_PAGE_SIZE = 50;
export const MAX_APPROVAL_PAGE_SIZE = 500;
/**
 * How often a process with watchers looks whether another process wrote approval events (one
 * read for all its watchers: `pollForChanges`); this process's own wake them at once.
 */
export const WATCH_POLL_MS = 500;

/** ListApprovals: an owner's approvals, newest first, a page at a time (opaque page tokens). */
export async function listApprovals(
  ctx: AuthorityContext,
  req: {
    readonly owner: string;
    readonly status?: ApprovalStatus;
    readonly pageSize?: number;
    readonly pageToken?: string;
  },
  actor?: Actor,
): Promise<{ readonly approvals: readonly Approval[]; readonly nextPageToken: string }> {
  const directory = ctx.policySet().approvers;
  const owner = ownerFor(req.owner, actor, directory);
  const size = req.pageSize ?? 0;
  if (!Number.isSafeInteger(size) || size < 0)
    throw invalidRequest("page_size", "must not be negative");
  const limit = Math.min(size === 0 ? DEFAULT_APPROVAL_PAGE_SIZE : size, MAX_APPROVAL_PAGE_SIZE);
  const after =
    req.pageToken === undefined || req.pageToken === "" ? undefined : approvalCursor(req.pageToken);
  await ctx.store.expireApprovals(ctx.now());
  const page = await ctx.store.listApprovals({
    ...(owner === undefined ? {} : { owner }),
    ...(req.status ? { status: req.status } : {}),
    limit: limit + 1,
    ...(after ? { after } : {}),
  });
  const approvals = page.slice(0, limit);
  const last = approvals.at(-1);
  return {
    // A role holder's page is filtered after the read: it may be shorter than the page size.
    approvals: approvals.filter((a) => visible(a, actor, directory)),
    nextPageToken:
      page.length > limit && last ? pageToken({ createdAt: last.createdAt, id: last.id }) : "",
  };
}

/** GetApproval: one approval by id. */
export async function getApproval(
  ctx: AuthorityContext,
  approvalId: string,
  actor?: Actor,
): Promise<Approval> {
  if (approvalId === "") throw invalidRequest("approval_id", "is required");
  await ctx.store.expireApprovals(ctx.now());
  const stored = await ctx.store.getApproval(approvalId);
  if (!stored)
    throw new AuthorityError("NOT_FOUND", `no approval with id "${approvalId.slice(0, 128)}"`);
  if (!visible(stored.approval, actor, ctx.policySet().approvers)) throw notYours();
  return stored.approval;
}

/** What an owner (or another approver) answers. */
export interface DecideApprovalRequest {
  readonly approvalId: string;
  readonly outcome: "approve" | "reject";
  /** Who decides, when no authenticated actor is known. */
  readonly decidedBy: string;
  readonly note: string;
}

/**
 * DecideApproval: one approver's answer. An approval is granted once its requirement's count of
 * distinct approvers approved; one rejection rejects. Approving re-checks the call against the
 * grant and the policy as they are now; a call no longer approvable ends `superseded` with the
 * reason. Answering a decided, expired or consumed approval, or answering twice, is
 * FAILED_PRECONDITION. The approver is the actor when one is known, else `decidedBy` (also for
 * protected mode's local operator, who is anyone on the machine). Only an approver the
 * requirement admits counts (`answerProblem`: the role `approve:<requirement>`, or the owner when
 * the requirement allows the owner; `admin` alone does not): anyone else is PERMISSION_DENIED
 * and nothing changes. This is the one path every approval is decided on (RPC and CLI alike).
 */
export async function decideApproval(
  ctx: AuthorityContext,
  req: DecideApprovalRequest,
  actor?: Actor,
): Promise<Approval> {
  if (req.approvalId === "") throw invalidRequest("approval_id", "is required");
  const approver =
    actor === undefined || actor.protectedMode === true ? req.decidedBy.trim() : actor.principal;
  if (approver === "") throw invalidRequest("decided_by", "is required");
  if (req.note.length > 1000) throw invalidRequest("note", "must be at most 1000 characters");
  const stored = await ctx.store.getApproval(req.approvalId);
  if (!stored)
    throw new AuthorityError("NOT_FOUND", `no approval with id "${req.approvalId.slice(0, 128)}"`);
  const { policy, approvers: directory } = ctx.policySet();
  if (!visible(stored.approval, actor, directory)) throw notYours();
  const operator = actor === undefined || actor.protectedMode === true;
  const problem = answerProblem(
    policy,
    stored.approval,
    { principal: approver, roles: actor?.roles ?? [], ...(operator ? { operator } : {}) },
    req.outcome,
    directory,
  );
  if (problem !== undefined) throw new AuthorityError("PERMISSION_DENIED", problem);
  const now = ctx.now();
  const supersede =
    req.outcome === "approve"
      ? await recheck(ctx, stored.approval, stored.argumentsJson, now)
      : undefined;
  const outcome = await ctx.store.decideApproval({
    approvalId: req.approvalId,
    approver,
    outcome: req.outcome,
    at: now,
    ...(req.note === "" ? {} : { note: req.note }),
    ...(supersede ? { supersede } : {}),
  });
  ctx.approvalFeed.notify();
  if (outcome.ok) return outcome.approval;
  const a = outcome.approval;
  if (outcome.problem === "already_answered") {
    throw new AuthorityError(
      "FAILED_PRECONDITION",
      `${approver} has already answered approval ${a.id}; it needs ${a.requiredApprovals} distinct approvers`,
    );
  }
  const why = a.statusReason ? ` (${a.statusReason.code}: ${a.statusReason.message})` : "";
  throw new AuthorityError(
    "FAILED_PRECONDITION",
    `approval ${a.id} is ${a.status}${why}, not pending; it cannot be decided again`,
  );
}

/** WatchApprovals: the owner's approval events after `afterSequence` (default: from now on), until `signal` aborts. */
export async function* watchApprovals(
  ctx: AuthorityContext,
  req: { readonly owner: string; readonly afterSequence?: number },
  options: { readonly actor?: Actor; readonly signal: AbortSignal },
): AsyncGenerator<ApprovalEvent> {
  const owner = ownerFor(req.owner, options.actor, ctx.policySet().approvers);
  if (
    req.afterSequence !== undefined &&
    !(Number.isSafeInteger(req.afterSequence) && req.afterSequence >= 0)
  ) {
    throw invalidRequest("after_sequence", "must be a non-negative integer");
  }
  let after = req.afterSequence ?? (await ctx.store.lastApprovalSequence());
  while (!options.signal.aborted) {
    // Read before looking: a change notified while the store is read wakes the wait at once.
    const since = ctx.approvalFeed.generation();
    const events = await ctx.store.approvalEvents(owner, after, 100);
    for (const event of events) {
      if (isAborted(options.signal)) return;
      if (visible(event.approval, options.actor, ctx.policySet().approvers)) yield event;
      after = event.sequence;
    }
    // No timer while nothing changes: an idle watcher costs nothing until a change wakes it.
    if (events.length < 100) await ctx.approvalFeed.wait(options.signal, since);
  }
}

/** The pending approval a require_approval verdict creates (the count from the policy in force). */
export function approvalDraft(
  ctx: Pick<AuthorityContext, "newId" | "approvalTtlSeconds">,
  grant: TaskGrant,
  action: CatalogAction,
  verdict: Verdict,
  policy: Policy,
  call: { readonly args: JsonObject; readonly canonical: string; readonly now: number },
): ApprovalDraft {
  const { args, now } = call;
  const requirement = verdict.requirement ?? "owner";
  return {
    approval: {
      id: ctx.newId("apr"),
      grantId: grant.id,
      rootId: grant.rootId,
      subject: grant.subject,
      owner: grant.owner,
      actionId: verdict.actionId,
      toolName: verdict.toolName,
      requirement,
      requiredApprovals: approversFor(policy, requirement),
      callDigest: verdict.callDigest,
      ...(verdict.rule === undefined ? {} : { rule: verdict.rule }),
      summary: summarizeArguments(action, args),
      status: "pending",
      createdAt: now,
      expiresAt: Math.min(now + ctx.approvalTtlSeconds, grant.expiresAt),
      approvedBy: [],
    },
    argumentsJson: call.canonical,
  };
}

/** The re-check when approving: the grant (and its ancestors) unrevoked, then the pure re-check of grant and policy. */
async function recheck(
  ctx: AuthorityContext,
  approval: Approval,
  argumentsJson: string,
  now: number,
): Promise<Reason | undefined> {
  const stored = await ctx.store.getGrant(approval.grantId);
  if (!stored)
    return { code: "GRANT_INVALID", message: "The grant this call was made under is not known." };
  if (stored.revokedAt !== undefined || (await ctx.store.anyRevoked(stored.grant.chain))) {
    return {
      code: "GRANT_REVOKED",
      message: "The grant this call was made under has been revoked.",
    };
  }
  const { policy, catalog } = ctx.policySet();
  return recheckCall(
    stored.grant,
    policy,
    catalog,
    { actionId: approval.actionId, arguments: JSON.parse(argumentsJson) as unknown },
    now,
  );
}

/** Read through a function, so that the compiler does not narrow it across an await. */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}
