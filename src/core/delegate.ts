import type { Catalog } from "./catalog.js";
import { ANY_RUN, caveatsOf, type GrantLimits, type TaskGrant } from "./grant.js";
import { mergeBinds } from "./binds.js";
import { compareCodeUnits, sortedUnique, type JsonSchema } from "./json.js";
import type { ActionCaveats, GrantMode, Rule } from "./policy.js";

/** What a grant holder asks to hand on to a sub-agent. Everything it omits is inherited. */
export interface DelegationSpec {
  readonly subject: string;
  readonly purpose?: string;
  readonly allowed: readonly string[];
  readonly approvalRequired?: readonly string[];
  readonly ttlSeconds?: number;
  readonly limits?: Partial<GrantLimits>;
  /** Extra caveats per action; they add to the parent's, never replace them. */
  readonly caveats?: Readonly<Record<string, Partial<ActionCaveats>>>;
  readonly mode?: GrantMode;
  /** The parent's run the child is started from; absent: bound to the parent grant as a whole. */
  readonly runId?: string;
}

/** Why a delegation was refused. */
export const REFUSAL_CODES = [
  "ACTION_NOT_IN_PARENT",
  "ACTION_NOT_DELEGABLE",
  "EXPIRY_WIDENS",
  "LIMIT_WIDENS",
  "DEPTH_EXCEEDED",
  "BIND_CONFLICT",
  "MODE_WIDENS",
] as const;

export type RefusalCode = (typeof REFUSAL_CODES)[number];

export type DelegateResult =
  | { readonly kind: "granted"; readonly grant: TaskGrant }
  | { readonly kind: "refused"; readonly code: RefusalCode; readonly message: string };

/**
 * Derives a child grant that only narrows its parent (DESIGN §2): its actions are delegable and
 * held by the parent, its expiry, limits and depth never widen, caveats accumulate, a bound
 * argument is never re-bound, and shadow never turns live.
 */
export function delegate(
  parent: TaskGrant,
  spec: DelegationSpec,
  catalog: Catalog,
  now: number,
  id: string,
): DelegateResult {
  const depth = parent.chain.length + 1;
  if (depth > parent.limits.maxDelegationDepth) {
    return refused(
      "DEPTH_EXCEEDED",
      `delegation depth ${depth} exceeds the grant's maximum of ${parent.limits.maxDelegationDepth}`,
    );
  }
  if (parent.mode === "shadow" && spec.mode === "live")
    return refused("MODE_WIDENS", "a shadow grant cannot delegate a live one");

  const approvalRequired = sortedUnique(spec.approvalRequired ?? []);
  const allowed = sortedUnique(spec.allowed).filter((a) => !approvalRequired.includes(a));
  const parentAllowed = new Set(parent.allowed);
  const parentHolds = new Set([...parent.allowed, ...parent.approvalRequired]);
  for (const actionId of allowed) {
    if (!parentAllowed.has(actionId)) {
      const why = parentHolds.has(actionId) ? "only with approval" : "not at all";
      return refused(
        "ACTION_NOT_IN_PARENT",
        `the parent grant holds ${actionId} ${why}, so it cannot be delegated as allowed`,
      );
    }
  }
  for (const actionId of approvalRequired) {
    if (!parentHolds.has(actionId))
      return refused("ACTION_NOT_IN_PARENT", `the parent grant does not hold ${actionId}`);
  }
  for (const actionId of [...allowed, ...approvalRequired]) {
    if (catalog.actions.get(actionId)?.delegable !== true)
      return refused("ACTION_NOT_DELEGABLE", `${actionId} is not delegable`);
  }

  if (now >= parent.expiresAt) return refused("EXPIRY_WIDENS", "the parent grant has expired");
  if (now < parent.issuedAt)
    return refused(
      "EXPIRY_WIDENS",
      "the parent grant is not valid yet; a child would start before it",
    );
  const expiresAt = spec.ttlSeconds === undefined ? parent.expiresAt : now + spec.ttlSeconds;
  if (!(
    spec.ttlSeconds === undefined ||
    (Number.isSafeInteger(spec.ttlSeconds) && spec.ttlSeconds > 0)
  )) {
    return refused("EXPIRY_WIDENS", "ttlSeconds must be a positive integer");
  }
  if (expiresAt > parent.expiresAt)
    return refused("EXPIRY_WIDENS", "the child grant would outlive its parent");

  const limits = narrowLimits(parent.limits, spec.limits ?? {});
  if (typeof limits === "string") return refused("LIMIT_WIDENS", limits);

  const held = [...allowed, ...approvalRequired];
  const stray = Object.keys(spec.caveats ?? {}).find((actionId) => !held.includes(actionId));
  if (stray !== undefined)
    return refused(
      "ACTION_NOT_IN_PARENT",
      `caveats name ${stray}, which the child grant does not hold`,
    );
  const caveats = accumulateCaveats(parent, held, spec.caveats ?? {});
  if (typeof caveats === "string") return refused("BIND_CONFLICT", caveats);

  const grant: TaskGrant = {
    id,
    rootId: parent.rootId,
    parentId: parent.id,
    chain: [...parent.chain, parent.id],
    chainRuns: [...(parent.chainRuns ?? parent.chain.map(() => ANY_RUN)), spec.runId ?? ANY_RUN],
    subject: spec.subject,
    owner: parent.owner,
    purpose: spec.purpose ?? parent.purpose,
    profile: parent.profile,
    issuedAt: now,
    expiresAt,
    catalogVersion: parent.catalogVersion,
    allowed,
    approvalRequired,
    denied: [...parent.denied],
    caveats,
    limits,
    mode: spec.mode ?? parent.mode,
    sources: [...parent.sources],
  };
  return { kind: "granted", grant };
}

function refused(code: RefusalCode, message: string): DelegateResult {
  return { kind: "refused", code, message };
}

const LIMIT_NAMES = ["maxCalls", "maxCallsPerAction", "maxDelegationDepth"] as const;

/** The child's limits: each asked limit must not exceed the parent's; unasked ones are inherited. */
function narrowLimits(parent: GrantLimits, asked: Partial<GrantLimits>): GrantLimits | string {
  const out: Record<string, number> = {};
  for (const name of LIMIT_NAMES) {
    const mine = asked[name];
    const theirs = parent[name];
    if (mine !== undefined && !(Number.isSafeInteger(mine) && mine >= 0))
      return `${name} must be a non-negative integer`;
    if (mine !== undefined && theirs !== undefined && mine > theirs)
      return `${name} ${mine} exceeds the parent's ${theirs}`;
    const value = mine ?? theirs;
    if (value !== undefined) out[name] = value;
  }
  return out as unknown as GrantLimits;
}

/** Parent caveats of the kept actions plus the spec's; answers a message when a bound argument would be re-bound. */
function accumulateCaveats(
  parent: TaskGrant,
  kept: readonly string[],
  added: Readonly<Record<string, Partial<ActionCaveats>>>,
): Record<string, ActionCaveats> | string {
  const out: Record<string, ActionCaveats> = {};
  for (const actionId of [...kept].sort(compareCodeUnits)) {
    const base = caveatsOf(parent, actionId);
    const extra = Object.hasOwn(added, actionId) ? (added[actionId] as Partial<ActionCaveats>) : {};
    const merged = mergeBinds(base.binds, extra.binds ?? {});
    if (!merged.ok)
      return `argument "${merged.conflict}" of ${actionId} is already bound by the parent grant`;
    const constraints: JsonSchema[] = [...base.constraints, ...(extra.constraints ?? [])];
    const rules: Rule[] = [...base.rules, ...(extra.rules ?? [])];
    if (constraints.length > 0 || rules.length > 0 || Object.keys(merged.binds).length > 0) {
      out[actionId] = { constraints, binds: merged.binds, rules };
    }
  }
  return out;
}
