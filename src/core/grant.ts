import type { ActionCaveats, GrantMode } from "./policy.js";

/** Limits a grant carries; absent means "no limit", except depth, which defaults to 0 (no delegation). */
export interface GrantLimits {
  readonly maxCalls?: number;
  readonly maxCallsPerAction?: number;
  readonly maxDelegationDepth: number;
}

/**
 * What one agent run may do. Issued by `compose`, narrowed by `delegate`, and carried inside a
 * signed token. Times are Unix seconds. The three action lists are disjoint and sorted.
 */
export interface TaskGrant {
  readonly id: string;
  /** The grant at the root of the delegation chain (its own id for a root grant). */
  readonly rootId: string;
  readonly parentId: string | null;
  /** Ancestor ids, root first; its length is the grant's delegation depth. */
  readonly chain: readonly string[];
  /** The agent the grant is for. */
  readonly subject: string;
  /** Who approves the grant's approval-requiring calls. */
  readonly owner: string;
  readonly purpose: string;
  readonly profile: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
  readonly catalogVersion: string;
  readonly allowed: readonly string[];
  readonly approvalRequired: readonly string[];
  readonly denied: readonly string[];
  /** Constraints, binds and rules of granted actions, keyed by action id (sorted). */
  readonly caveats: Readonly<Record<string, ActionCaveats>>;
  readonly limits: GrantLimits;
  readonly mode: GrantMode;
  /** The policy sources the grant was composed from. */
  readonly sources: readonly string[];
  /**
   * For a delegated grant, beside `chain`: the run of each ancestor the next grant down was
   * started from, "*" where it was delegated without one (bound to that grant as a whole).
   * Labels flow along these links (DESIGN §7); a delegated grant without them is bound "*" at
   * every level. Absent on a root grant.
   */
  readonly chainRuns?: readonly string[];
}

/** The run name a grant delegated without a run is bound to: the parent grant as a whole. */
export const ANY_RUN = "*";

/** The caveats a grant holds for an action; none when it holds none. */
export function caveatsOf(grant: TaskGrant, actionId: string): ActionCaveats {
  return Object.hasOwn(grant.caveats, actionId)
    ? (grant.caveats[actionId] as ActionCaveats)
    : NO_CAVEATS;
}

export const NO_CAVEATS: ActionCaveats = Object.freeze({ constraints: [], binds: {}, rules: [] });

/** True when the caveats add nothing. */
export function isEmptyCaveats(c: ActionCaveats): boolean {
  return c.constraints.length === 0 && c.rules.length === 0 && Object.keys(c.binds).length === 0;
}
