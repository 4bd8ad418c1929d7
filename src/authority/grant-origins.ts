import type { TaskGrant } from "../core/grant.js";
import type { OriginLink } from "../core/replay.js";
import type { AuthorityContext } from "./context.js";

/**
 * The recorded origins of a grant's chain, root first, with each grant's issue time: what
 * `recompose` makes the chain again from, for a shadow policy and for `charter replay` alike.
 * `known`: ancestors the caller has read already (the others are read from the store).
 * Undefined when any grant of the chain is gone or has no recorded origin (issued before origins
 * were recorded, or pruned).
 */
export async function originLinks(
  ctx: Pick<AuthorityContext, "store">,
  grant: TaskGrant,
  known: readonly TaskGrant[] = [],
): Promise<OriginLink[] | undefined> {
  const byId = new Map(known.map((a) => [a.id, a]));
  byId.set(grant.id, grant);
  const links: OriginLink[] = [];
  for (const id of [...grant.chain, grant.id]) {
    const g = byId.get(id) ?? (await ctx.store.getGrant(id))?.grant;
    const origin = await ctx.store.getGrantOrigin(id);
    if (g === undefined || origin === undefined) return undefined;
    links.push({ grantId: id, issuedAt: g.issuedAt, origin });
  }
  return links;
}
