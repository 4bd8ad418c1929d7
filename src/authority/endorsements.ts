import { answerProblem } from "../core/approvers.js";
import { canonicalJson } from "../core/digest.js";
import { displayText } from "../core/display-text.js";
import {
  boundsAccept,
  MAX_BOUNDS_BYTES,
  MAX_ENDORSEMENT_CALLS,
  MAX_ENDORSEMENT_SECONDS,
  MIN_ENDORSEMENT_SECONDS,
  type Endorsement,
} from "../core/endorsement.js";
import { isJsonObject } from "../core/json.js";
import { parseStrictJson } from "../core/strict-json.js";
import type { Actor } from "./approvals.js";
import { notYours, visible } from "./approval-access.js";
import type { AuthorityContext } from "./context.js";
import { AuthorityError, invalidRequest } from "./errors.js";
import { approvalCursor, pageToken } from "./page-token.js";

/** What an approver asks to endorse: an approval it approved, the bounds, how many calls and for how long. */
export interface EndorseApprovalRequest {
  readonly approvalId: string;
  /** A JSON Schema over the call's arguments. */
  readonly boundsJson: string;
  readonly maxCalls: number;
  readonly ttlSeconds: number;
  /** Who endorses, when no authenticated actor is known (protected mode, the offline CLI). */
  readonly endorsedBy: string;
}

/**
 * EndorseApproval: an approver's "this call and calls like it within these bounds, for T or K
 * calls", minted from an approval it approved. Allowed only when the endorser may approve that
 * approval (`answerProblem`: the same roles, directory, owner and requester rules as
 * DecideApproval) and is one of its approvers; the bounds must accept the approval's own
 * arguments; it lasts 1 minute to 24 hours and never past the grant's expiry. Refused with
 * nothing recorded otherwise.
 */
export async function endorseApproval(
  ctx: AuthorityContext,
  req: EndorseApprovalRequest,
  actor?: Actor,
): Promise<Endorsement> {
  if (req.approvalId === "") throw invalidRequest("approval_id", "is required");
  const operator = actor === undefined || actor.protectedMode === true;
  const endorser = operator ? req.endorsedBy.trim() : actor.principal;
  if (endorser === "") throw invalidRequest("endorsed_by", "is required");
  if (
    !Number.isSafeInteger(req.maxCalls) ||
    req.maxCalls < 1 ||
    req.maxCalls > MAX_ENDORSEMENT_CALLS
  )
    throw invalidRequest("max_calls", `must be between 1 and ${MAX_ENDORSEMENT_CALLS}`);
  if (
    !Number.isSafeInteger(req.ttlSeconds) ||
    req.ttlSeconds < MIN_ENDORSEMENT_SECONDS ||
    req.ttlSeconds > MAX_ENDORSEMENT_SECONDS
  )
    throw invalidRequest(
      "ttl_seconds",
      `must be between ${MIN_ENDORSEMENT_SECONDS} and ${MAX_ENDORSEMENT_SECONDS} (1 minute to 24 hours)`,
    );
  const { policy, catalog, approvers: directory } = ctx.policySet();
  const bounds = boundsSchema(ctx, req.boundsJson);
  const stored = await ctx.store.getApproval(req.approvalId);
  if (!stored)
    throw new AuthorityError("NOT_FOUND", `no approval with id "${req.approvalId.slice(0, 128)}"`);
  const a = stored.approval;
  if (!visible(a, actor, directory)) throw notYours();
  const problem = answerProblem(
    policy,
    a,
    { principal: endorser, roles: actor?.roles ?? [], ...(operator ? { operator } : {}) },
    "approve",
    directory,
  );
  // Names in a message are shown escaped, as in approvals (a principal may hold a bidi control).
  if (problem !== undefined) throw new AuthorityError("PERMISSION_DENIED", displayText(problem));
  if (!a.approvedBy.includes(endorser))
    throw new AuthorityError(
      "FAILED_PRECONDITION",
      `${displayText(endorser)} has not approved approval ${a.id}; endorse only a call you approved`,
    );
  if (a.status === "rejected" || a.status === "superseded")
    throw new AuthorityError("FAILED_PRECONDITION", `approval ${a.id} is ${a.status}`);
  if (!boundsAccept(catalog, bounds, JSON.parse(stored.argumentsJson) as unknown))
    throw invalidRequest("bounds_json", "does not accept the approved call's own arguments");
  const now = ctx.now();
  const grant = await ctx.store.getGrant(a.grantId);
  if (
    !grant ||
    grant.revokedAt !== undefined ||
    grant.grant.expiresAt <= now ||
    (await ctx.store.anyRevoked(grant.grant.chain))
  )
    throw new AuthorityError(
      "FAILED_PRECONDITION",
      `the grant of approval ${a.id} is revoked, expired or unknown; nothing to endorse`,
    );
  const endorsement: Endorsement = {
    id: ctx.newId("end"),
    grantId: a.grantId,
    owner: a.owner,
    subject: a.subject,
    actionId: a.actionId,
    requirement: a.requirement,
    ...(a.rule === undefined ? {} : { rule: a.rule }),
    boundsJson: canonicalJson(bounds),
    maxCalls: req.maxCalls,
    usedCalls: 0,
    createdAt: now,
    expiresAt: Math.min(now + req.ttlSeconds, grant.grant.expiresAt),
    endorsedBy: endorser,
    approvalId: a.id,
    status: "active",
  };
  await ctx.store.createEndorsement(endorsement, operator ? undefined : actor.principal);
  return endorsement;
}

/** The bounds as a schema the catalog's compiler accepts (its linear-time patterns); anything else is INVALID_REQUEST. */
function boundsSchema(ctx: AuthorityContext, text: string) {
  if (text.trim() === "") throw invalidRequest("bounds_json", "is required");
  const parsed = parseStrictJson(text, { maxBytes: MAX_BOUNDS_BYTES, maxDepth: 32 });
  if (!parsed.ok) throw invalidRequest("bounds_json", parsed.message);
  if (!isJsonObject(parsed.value))
    throw invalidRequest("bounds_json", "must be a JSON Schema object");
  try {
    ctx.policySet().catalog.schemas.compile(parsed.value);
  } catch (err) {
    throw invalidRequest(
      "bounds_json",
      `is not a schema Charter compiles: ${err instanceof Error ? err.message.slice(0, 200) : "invalid"}`,
    );
  }
  return parsed.value;
}

/** ListEndorsements: endorsements newest first, a page at a time; an actor sees those it may revoke or approve for. */
export async function listEndorsements(
  ctx: AuthorityContext,
  req: {
    readonly owner: string;
    readonly activeOnly: boolean;
    readonly pageSize?: number;
    readonly pageToken?: string;
  },
  actor?: Actor,
): Promise<{ readonly endorsements: readonly Endorsement[]; readonly nextPageToken: string }> {
  const size = req.pageSize ?? 0;
  if (!Number.isSafeInteger(size) || size < 0)
    throw invalidRequest("page_size", "must not be negative");
  const limit = Math.min(size === 0 ? 50 : size, 500);
  const after =
    req.pageToken === undefined || req.pageToken === "" ? undefined : approvalCursor(req.pageToken);
  const page = await ctx.store.listEndorsements({
    ...(req.owner === "" ? {} : { owner: req.owner }),
    ...(req.activeOnly ? { liveAt: ctx.now() } : {}),
    limit: limit + 1,
    ...(after ? { after } : {}),
  });
  const shown = page.slice(0, limit);
  const last = shown.at(-1);
  const directory = ctx.policySet().approvers;
  return {
    endorsements: shown.filter((e) => mayRevoke(e, actor) || visible(e, actor, directory)),
    nextPageToken:
      page.length > limit && last ? pageToken({ createdAt: last.createdAt, id: last.id }) : "",
  };
}

/**
 * RevokeEndorsement: it approves nothing more, at once. The endorser, the owner or an admin may
 * revoke; protected mode's operator and the offline CLI name who revokes (`revokedBy`).
 */
export async function revokeEndorsement(
  ctx: AuthorityContext,
  req: { readonly endorsementId: string; readonly revokedBy: string },
  actor?: Actor,
): Promise<Endorsement> {
  if (req.endorsementId === "") throw invalidRequest("endorsement_id", "is required");
  const operator = actor === undefined || actor.protectedMode === true;
  const who = operator ? req.revokedBy.trim() : actor.principal;
  if (who === "") throw invalidRequest("revoked_by", "is required");
  const found = await ctx.store.getEndorsement(req.endorsementId);
  if (!found)
    throw new AuthorityError(
      "NOT_FOUND",
      `no endorsement with id "${req.endorsementId.slice(0, 128)}"`,
    );
  if (!operator && !mayRevoke(found, actor))
    throw new AuthorityError(
      "PERMISSION_DENIED",
      `only its endorser, its owner or an admin may revoke endorsement ${found.id}`,
    );
  const outcome = await ctx.store.revokeEndorsement(
    found.id,
    who,
    ctx.now(),
    operator ? undefined : actor.principal,
  );
  return outcome.endorsement;
}

function mayRevoke(e: Endorsement, actor: Actor | undefined): boolean {
  return (
    actor === undefined ||
    actor.roles.includes("admin") ||
    actor.principal === e.endorsedBy ||
    actor.principal === e.owner
  );
}
