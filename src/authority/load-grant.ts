import type { TaskGrant } from "../core/grant.js";
import type { Policy } from "../core/policy.js";
import { grantWithdrawal } from "../core/withdraw.js";
import { StoreError } from "../store/port.js";
import type { AuthorityContext } from "./context.js";
import { WITHDRAWN_PREFIX, recordWithdrawal } from "./sticky-withdrawal.js";

/** A presented grant token, checked: verified, in its time window, and neither it nor an ancestor revoked. */
export type GrantCheck =
  | { readonly ok: true; readonly grant: TaskGrant }
  | {
      readonly ok: false;
      readonly code: "GRANT_INVALID" | "GRANT_EXPIRED" | "GRANT_REVOKED" | "POLICY_WITHDRAWN";
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
    const why = await withdrawnReason(ctx, grant);
    if (why !== undefined) return withdrawn(why);
    return {
      ok: false,
      code: "GRANT_REVOKED",
      message: "This task's grant has been revoked. Stop making tool calls and report back.",
    };
  }
  return { ok: true, grant };
}

const withdrawn = (why: string): GrantCheck => ({
  ok: false,
  code: "POLICY_WITHDRAWN",
  message: `The authority behind this task's grant has been withdrawn (${why}). Stop making tool calls and report back.`,
});

/**
 * The withdrawal recorded for the grant or an ancestor (its own first), without the prefix, or
 * undefined when its revocation was not one. Read only for a revoked grant: a grant that is not
 * revoked costs nothing here.
 */
async function withdrawnReason(
  ctx: Pick<AuthorityContext, "store">,
  grant: TaskGrant,
): Promise<string | undefined> {
  for (const id of [grant.id, ...[...grant.chain].reverse()]) {
    const reason = (await ctx.store.getGrant(id))?.revokedReason;
    if (reason?.startsWith(WITHDRAWN_PREFIX) === true) return reason.slice(WITHDRAWN_PREFIX.length);
  }
  return undefined;
}

/**
 * `loadGrant` under the policy in force, the kill switch made sticky: a grant `policy` withdraws
 * as a whole is recorded revoked with its reason (`recordWithdrawal`) before the caller denies the
 * call POLICY_WITHDRAWN (as before: the check answers ok), so a reload that lifts the withdrawal does not bring it back; a grant revoked
 * by an earlier withdrawal is refused POLICY_WITHDRAWN with the recorded reason (`loadGrant`).
 * A failed record changes no answer: the policy in force withdraws the grant all the same.
 */
export async function loadGrantInForce(
  ctx: AuthorityContext,
  token: string,
  now: number,
  policy: Policy,
): Promise<GrantCheck> {
  const check = await loadGrant(ctx, token, now);
  if (!check.ok) return check;
  const why = grantWithdrawal(check.grant, policy);
  if (why === undefined) return check;
  await recordWithdrawal(ctx, check.grant, policy, why).catch(() => undefined);
  return check;
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
