import type { TaskGrant } from "../core/grant.js";
import { StoreError } from "../store/port.js";
import type { AuthorityContext } from "./context.js";

/** A presented grant token, checked: verified, in its time window, and neither it nor an ancestor revoked. */
export type GrantCheck =
  | { readonly ok: true; readonly grant: TaskGrant }
  | {
      readonly ok: false;
      readonly code: "GRANT_INVALID" | "GRANT_EXPIRED" | "GRANT_REVOKED";
      readonly message: string;
    };

/**
 * The load step for a grant token: verify it (the verifier may answer from its cache), then ask
 * the store, on every call, whether the grant or any ancestor is revoked (its answer holds every
 * revocation committed before the call, whichever process made it).
 */
export async function loadGrant(
  ctx: Pick<AuthorityContext, "verifier" | "store">,
  token: string,
  now: number,
): Promise<GrantCheck> {
  if (token === "")
    return { ok: false, code: "GRANT_INVALID", message: "No grant token was presented." };
  const verified = await ctx.verifier.verify(token, now);
  if (!verified.ok) return { ok: false, code: verified.code, message: verified.message };
  const grant = verified.grant;
  if (await ctx.store.anyRevoked([...grant.chain, grant.id])) {
    return {
      ok: false,
      code: "GRANT_REVOKED",
      message: "This task's grant has been revoked. Stop making tool calls and report back.",
    };
  }
  return { ok: true, grant };
}

/**
 * The stored grants a grant's chain names, root first: read and parsed once per id and then kept
 * in the context's cache of the store's ancestors (`ctx.caches.ancestors`; a stored grant never
 * changes; revocation is a separate row, asked by `loadGrant` every call).
 * A chain naming a grant the store lacks is CORRUPT.
 */
export async function loadAncestors(
  ctx: Pick<AuthorityContext, "store" | "caches">,
  grant: TaskGrant,
): Promise<TaskGrant[]> {
  const known = ctx.caches.ancestors(ctx.store);
  return Promise.all(
    grant.chain.map(async (id) => {
      const cached = known.get(id);
      if (cached !== undefined) return cached;
      const stored = await ctx.store.getGrant(id);
      if (!stored)
        throw new StoreError(
          "CORRUPT",
          `grant ${grant.id} names ancestor ${id}, which the store lacks`,
        );
      known.set(id, stored.grant);
      return stored.grant;
    }),
  );
}
