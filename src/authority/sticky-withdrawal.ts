import type { TaskGrant } from "../core/grant.js";
import type { Policy } from "../core/policy.js";
import { grantWithdrawal } from "../core/withdraw.js";
import type { AuthorityContext } from "./context.js";

/**
 * The kill switch made sticky. A grant the policy in force withdraws as a whole (a source it came
 * from is suspended or gone) is revoked in the store, as RevokeGrant revokes (its descendants
 * too, one `grant.revoked` audit record each, pending approvals superseded), with the reason
 * `withdrawn: <why>` and the caller `policy:<version>`. So a later reload that brings the source
 * back does not bring the grant back. The store is only told what the policy already denies: a
 * failed record leaves the call denied POLICY_WITHDRAWN by the policy in force.
 *
 * Single actions withdrawn by a deny list are not recorded: they stay withdrawn only while the
 * deny is in force (a grant+action record would need a store read on every allowed call).
 */

/** The reason a withdrawal is recorded under; `loadGrant` reads it back. */
export const WITHDRAWN_PREFIX = "withdrawn: ";

/** The caller written into the revocation's audit record. */
const withdrawnBy = (policy: Policy) => `policy:${policy.version}`;

/** Records that `policy` withdrew `grant` (`why`, from `grantWithdrawal`): revoked, with the reason. */
export async function recordWithdrawal(
  ctx: AuthorityContext,
  grant: TaskGrant,
  policy: Policy,
  why: string,
): Promise<void> {
  // As RevokeGrant (authority/grants.ts) does it: the subtree revoked, its pending approvals superseded.
  const now = ctx.now();
  const reason = `${WITHDRAWN_PREFIX}${why}`;
  const revoked = await ctx.store.revokeGrant(grant.id, reason, now, withdrawnBy(policy));
  const superseded = {
    code: "POLICY_WITHDRAWN",
    message: "The grant this call was made under has been withdrawn by policy.",
  } as const;
  if ((await ctx.store.supersedeApprovalsOf(revoked, superseded, now)) > 0)
    ctx.approvalFeed.notify();
}

/** How much one reload's sweep may do: grants read per page, and in all. */
export interface SweepLimits {
  readonly pageSize: number;
  readonly maxGrants: number;
}

export const DEFAULT_SWEEP_LIMITS: SweepLimits = { pageSize: 500, maxGrants: 200_000 };

/** What a sweep did: grants read, grants it recorded withdrawn, and whether it read them all. */
export interface SweepResult {
  readonly read: number;
  readonly withdrawn: number;
  readonly complete: boolean;
}

/**
 * Sweeps the live grants (neither revoked nor expired) for those `policy` withdraws as a whole and
 * records each (`recordWithdrawal`), so that a grant not called while the withdrawal was in force
 * stays stopped too. Bounded: pages of `pageSize`, at most `maxGrants` read (`complete` false
 * past that). A store error rejects; what was recorded before it stays recorded.
 */
export async function sweepWithdrawals(
  ctx: AuthorityContext,
  policy: Policy,
  limits: SweepLimits = DEFAULT_SWEEP_LIMITS,
): Promise<SweepResult> {
  let after = "";
  let read = 0;
  let withdrawn = 0;
  while (read < limits.maxGrants) {
    const page = await ctx.store.listLiveGrants(
      after,
      ctx.now(),
      Math.min(limits.pageSize, limits.maxGrants - read),
    );
    if (page.length === 0) return { read, withdrawn, complete: true };
    read += page.length;
    for (const grant of page) {
      const why = grantWithdrawal(grant, policy);
      if (why === undefined) continue;
      await recordWithdrawal(ctx, grant, policy, why);
      withdrawn++;
    }
    after = page[page.length - 1]?.id ?? after;
  }
  const more = await ctx.store.listLiveGrants(after, ctx.now(), 1);
  return { read, withdrawn, complete: more.length === 0 };
}

/**
 * Whether going from `before` (undefined at start) to `after` can withdraw a grant as a whole: a
 * source that applied before is now suspended or gone (at start: any source is suspended).
 */
export function mayWithdraw(before: Policy | undefined, after: Policy): boolean {
  if (before === undefined)
    return [...after.sources.values()].some((s) => s.status === "suspended");
  for (const [id, source] of before.sources) {
    if (source.status === "suspended") continue;
    const now = after.sources.get(id);
    if (now === undefined || now.status === "suspended") return true;
  }
  return false;
}

/** Sweeps run at reloads, one after another. */
export interface WithdrawalSweeper {
  /**
   * Before a reload puts a new pair in force: waits for the last sweep; if it failed, runs it again
   * under its policy (still the one in force) and rejects if that fails too, so the reload is
   * refused and the withdrawal stays in force (fail closed) rather than lifted unrecorded.
   */
  settle(): Promise<void>;
  /** After `after` went in force (replacing `before`): sweeps in the background when it may withdraw a grant. */
  start(before: Policy | undefined, after: Policy): void;
  /** The sweep under way, if any (tests wait for it). */
  idle(): Promise<void>;
}

export function createWithdrawalSweeper(
  ctx: AuthorityContext,
  options: {
    readonly warn: (message: string) => void;
    readonly signal?: AbortSignal;
    readonly limits?: SweepLimits;
  },
): WithdrawalSweeper {
  let last: { readonly policy: Policy; readonly ok: Promise<boolean> } | undefined;
  const run = (policy: Policy) =>
    sweepWithdrawals(ctx, policy, options.limits).then((result) => {
      if (!result.complete)
        options.warn(
          `withdrawal sweep for policy ${policy.version} stopped after ${result.read} grants (its bound); grants past it are recorded when they are next called`,
        );
      return result;
    });
  return {
    async settle() {
      if (last === undefined || (await last.ok)) return;
      if (options.signal?.aborted === true) return;
      await run(last.policy);
      last = { policy: last.policy, ok: Promise.resolve(true) };
    },
    start(before, after) {
      if (!mayWithdraw(before, after)) return;
      const ok = run(after).then(
        () => true,
        (err: unknown) => {
          if (options.signal?.aborted !== true)
            options.warn(
              `withdrawal sweep for policy ${after.version} failed (${(err as Error).message}); it runs again before the next reload`,
            );
          return false;
        },
      );
      last = { policy: after, ok };
    },
    async idle() {
      await last?.ok;
    },
  };
}
