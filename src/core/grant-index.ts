import { NO_CAVEATS, type TaskGrant } from "./grant.js";
import type { JsonSchema, JsonValue } from "./json.js";
import type { Rule } from "./policy.js";

/** One action's caveats as `decide` reads them: binds as entries, so that nothing is rebuilt per call. */
export interface IndexedCaveats {
  readonly binds: readonly (readonly [string, JsonValue])[];
  readonly constraints: readonly JsonSchema[];
  readonly rules: readonly Rule[];
}

/**
 * A grant's lists and caveats indexed for lookups that cost the same whatever the grant's size:
 * what `decide` asks of a grant on every call (is this id denied, approval-listed, allowed; which
 * caveats and sources apply) without scanning a list.
 */
export interface GrantIndex {
  readonly allowed: ReadonlySet<string>;
  readonly approvalRequired: ReadonlySet<string>;
  readonly denied: ReadonlySet<string>;
  readonly sources: ReadonlySet<string>;
  /** The caveats the grant holds for an action; none when it holds none. */
  caveats(actionId: string): IndexedCaveats;
}

const NO_INDEXED_CAVEATS: IndexedCaveats = Object.freeze({ binds: [], constraints: NO_CAVEATS.constraints, rules: NO_CAVEATS.rules });

/**
 * Indexes are remembered per grant object, for frozen grants only: the verifier hands out
 * deep-frozen grants and keeps each one for as long as its token is cached, so the index is built
 * once per verified token and goes when the grant does (a WeakMap holds nothing alive). A grant
 * that is not frozen could change under its index, so it is indexed afresh on each call.
 */
const remembered = new WeakMap<TaskGrant, GrantIndex>();

/** The index of `grant`: built once for a frozen grant, on every call for another. */
export function grantIndex(grant: TaskGrant): GrantIndex {
  if (!Object.isFrozen(grant)) return buildIndex(grant);
  let index = remembered.get(grant);
  if (index === undefined) {
    index = buildIndex(grant);
    remembered.set(grant, index);
  }
  return index;
}

function buildIndex(grant: TaskGrant): GrantIndex {
  const caveats = new Map<string, IndexedCaveats>();
  for (const [actionId, c] of Object.entries(grant.caveats)) {
    caveats.set(actionId, { binds: Object.entries(c.binds), constraints: c.constraints, rules: c.rules });
  }
  return {
    allowed: new Set(grant.allowed),
    approvalRequired: new Set(grant.approvalRequired),
    denied: new Set(grant.denied),
    sources: new Set(grant.sources),
    caveats: (actionId) => caveats.get(actionId) ?? NO_INDEXED_CAVEATS,
  };
}
