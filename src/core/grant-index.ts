import { NO_CAVEATS, type TaskGrant } from "./grant.js";
import type { JsonSchema, JsonValue } from "./json.js";
import { grantIndexes, indexedCaveatRecords, listMemberships } from "./memo.js";
import type { ActionCaveats, Rule } from "./policy.js";

/** One action's caveats as `decide` reads them: binds as entries, so that nothing is rebuilt per call. */
export interface IndexedCaveats {
  readonly binds: readonly (readonly [string, JsonValue])[];
  readonly constraints: readonly JsonSchema[];
  readonly rules: readonly Rule[];
}

/**
 * What `decide` asks of a grant on every call (is this id denied, approval-listed, allowed; which
 * caveats and sources apply), answered at a cost that does not grow with the grant: no list is
 * scanned per call.
 */
export interface GrantIndex {
  readonly allowed: Membership;
  readonly approvalRequired: Membership;
  readonly denied: Membership;
  readonly sources: Membership;
  /** The caveats the grant holds for an action; none when it holds none. */
  caveats(actionId: string): IndexedCaveats;
}

/** Whether an id is in a list. */
export interface Membership {
  has(id: string): boolean;
}

const NO_INDEXED_CAVEATS: IndexedCaveats = Object.freeze({
  binds: [],
  constraints: NO_CAVEATS.constraints,
  rules: NO_CAVEATS.rules,
});

// Indexes are remembered for frozen values only (the verifier hands out deep-frozen grants and
// keeps each for as long as its token is cached): a value that is not frozen could change under
// its index, so it is indexed afresh each time. The tables are in `memo.ts`: weak, they hold
// nothing alive, and an index goes with its grant.

/** The index of `grant`: built once for a frozen grant, on every call for another. */
export function grantIndex(grant: TaskGrant): GrantIndex {
  const known = grantIndexes.get(grant);
  if (known !== undefined) return known;
  const index: GrantIndex = {
    allowed: membership(grant.allowed),
    approvalRequired: membership(grant.approvalRequired),
    denied: membership(grant.denied),
    sources: membership(grant.sources),
    caveats: (actionId) =>
      Object.hasOwn(grant.caveats, actionId)
        ? indexedCaveats(grant.caveats[actionId] as ActionCaveats)
        : NO_INDEXED_CAVEATS,
  };
  if (Object.isFrozen(grant)) grantIndexes.set(grant, index);
  return index;
}

/**
 * Membership in a list. A frozen list in strict code-unit order (as every grant's lists are once
 * `grantShapeProblem` accepted them) is binary-searched, which costs no memory beyond the list;
 * any other is copied into a Set, once when frozen.
 */
function membership(list: readonly string[]): Membership {
  const known = listMemberships.get(list);
  if (known !== undefined) return known;
  const index = strictlySorted(list)
    ? { has: (id: string) => binarySearch(list, id) }
    : new Set(list);
  if (Object.isFrozen(list)) listMemberships.set(list, index);
  return index;
}

function strictlySorted(list: readonly string[]): boolean {
  for (let i = 1; i < list.length; i++)
    if (!((list[i - 1] as string) < (list[i] as string))) return false;
  return list.every((id) => typeof id === "string");
}

function binarySearch(list: readonly string[], id: string): boolean {
  let low = 0;
  let high = list.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const at = list[mid] as string;
    if (at === id) return true;
    if (at < id) low = mid + 1;
    else high = mid - 1;
  }
  return false;
}

function indexedCaveats(c: ActionCaveats): IndexedCaveats {
  const known = indexedCaveatRecords.get(c);
  if (known !== undefined) return known;
  const indexed = { binds: Object.entries(c.binds), constraints: c.constraints, rules: c.rules };
  if (Object.isFrozen(c) && Object.isFrozen(c.binds)) indexedCaveatRecords.set(c, indexed);
  return indexed;
}
