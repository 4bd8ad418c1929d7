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
