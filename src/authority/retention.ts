import type { AuthorityContext } from "./context.js";

/**
 * Retention: deletes the grants that expired more than `retentionSeconds` ago (the decisions
 * recorded under them stay). Ancestors of a grant still kept stay too, with their revocations.
 * Answers how many grants were deleted.
 */
export async function pruneExpiredGrants(
  ctx: AuthorityContext,
  retentionSeconds: number,
): Promise<number> {
  return ctx.store.pruneGrants(ctx.now() - retentionSeconds);
}

/**
 * Retention of decision inputs: deletes the inputs of decisions made more than
 * `retainDecisionInputsDays` ago (all of them when that is 0: an earlier setting's are not kept
 * on). The decisions and their audit records stay. Answers how many were deleted.
 */
export async function pruneDecisionInputs(ctx: AuthorityContext): Promise<number> {
  return ctx.store.pruneDecisionInputs(ctx.now() - ctx.decisionInputs.retainSeconds + 1);
}

/** How long an expired endorsement is kept, so that `charter approvals endorsements` still shows it for a day. */
export const EXPIRED_ENDORSEMENT_RETENTION_SECONDS = 24 * 3600;

/** Deletes endorsements expired more than a day ago (their audit records stay); answers how many. */
export async function pruneEndorsements(ctx: AuthorityContext): Promise<number> {
  return ctx.store.pruneEndorsements(ctx.now() - EXPIRED_ENDORSEMENT_RETENTION_SECONDS);
}

/** How long an expired link is kept, so that a late click is told "expired" (410) rather than "not known". */
export const EXPIRED_LINK_RETENTION_SECONDS = 24 * 3600;

/** Deletes approval links expired more than a day ago; answers how many. */
export async function pruneApprovalLinks(ctx: AuthorityContext): Promise<number> {
  return ctx.store.pruneApprovalLinks(ctx.now() - EXPIRED_LINK_RETENTION_SECONDS);
}
