import type { CatalogAction, ToolDescriptor } from "./catalog.js";
import type { GrantIndex, IndexedCaveats, Membership } from "./grant-index.js";
import type { TaskGrant } from "./grant.js";
import type { ActionCaveats, AuthoritySource, Policy } from "./policy.js";
import type { ToolStatus, ViewEntry } from "./project.js";

// The core's memo tables: the only module-level caches of `src/core`
// (test/architecture/module-state.test.ts fails on one anywhere else). The core is pure and
// cannot reach an application context, so these stay here, and they are safe to share between
// contexts: each is keyed weakly by a value that never changes once made (a loaded catalog's
// action or descriptor, a built policy, a frozen grant, list or caveat record) and holds only a
// function of that key. Nothing else is written, so no table can change a verdict or a view,
// and an entry goes with its key.

/**
 * The entry of an action a grant holds without caveats, per status (`projectCatalog`): made
 * once per loaded action, frozen, shared by every view showing the action.
 */
export const plainEntries = new WeakMap<CatalogAction, Partial<Record<ToolStatus, ViewEntry>>>();

/** The entries `plainEntries` holds: shared between views, frozen (`isSharedEntry`). */
export const sharedEntries = new WeakSet<ViewEntry>();

/** Each catalog descriptor's pin (`descriptorDigest`: a canonical JSON and a sha256). */
export const descriptorPins = new WeakMap<ToolDescriptor, string>();

/** The active sources that deny each action, in policy order, per built policy (`withdrawnBy`). */
export const policyDenials = new WeakMap<Policy, ReadonlyMap<string, readonly AuthoritySource[]>>();

/** The index of each frozen grant (`grantIndex`). */
export const grantIndexes = new WeakMap<TaskGrant, GrantIndex>();

/** Membership in each frozen list of ids. */
export const listMemberships = new WeakMap<readonly string[], Membership>();

/** Each frozen caveat record, as `decide` reads it. */
export const indexedCaveatRecords = new WeakMap<ActionCaveats, IndexedCaveats>();
