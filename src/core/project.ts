import type { Catalog, CatalogAction, Effect, ToolAnnotations, ToolDescriptor } from "./catalog.js";
import { descriptorDigest } from "./digest.js";
import { caveatsOf, isEmptyCaveats, NO_CAVEATS, type TaskGrant } from "./grant.js";
import {
  cloneJson,
  compareCodeUnits,
  deepFreeze,
  isJsonObject,
  setOwn,
  type JsonObject,
} from "./json.js";
import type { ActionCaveats } from "./policy.js";
import { descriptorPins, plainEntries, sharedEntries } from "./memo.js";
import { narrowSchema } from "./narrow.js";
import { runConditionHolds, type RunView } from "./run.js";
import { acceptsValue } from "./schema.js";
import type { GrantMode } from "./policy.js";

/** Whether a model may call a tool outright or only with its owner's approval. */
export type ToolStatus = "callable" | "requires_approval";

/** One tool as a worker's model sees it. */
export interface ViewEntry {
  readonly actionId: string;
  readonly name: string;
  readonly description: string;
  /** The tool's input schema narrowed by the grant's constraints and binds. */
  readonly inputSchema: JsonObject;
  readonly outputSchema?: JsonObject;
  readonly status: ToolStatus;
  readonly effect: Effect;
  /** The action's resource template, such as `mailbox/{to}`. */
  readonly resourceTemplate?: string;
  /** The hints the catalog sets explicitly for this tool (renderings derive the rest from `effect`). */
  readonly annotations?: ToolAnnotations;
  /** The catalog descriptor's pin (`descriptorDigest`): what an upstream tool of this name must match. */
  readonly descriptorDigest: string;
}

/** The tools of one grant: callable first, then those requiring approval, each in grant order. */
export interface CatalogView {
  readonly grantId: string;
  readonly catalogVersion: string;
  readonly mode: GrantMode;
  readonly tools: readonly ViewEntry[];
}

/**
 * Projects a grant onto the catalog. Denied ids, ids the grant does not name and actions without
 * a tool are structurally absent: nothing of theirs appears anywhere in the view. An entry may
 * be shared with other views (below): never change one.
 */
export function projectCatalog(grant: TaskGrant, catalog: Catalog): CatalogView {
  const tools: ViewEntry[] = [];
  const denied = new Set(grant.denied);
  const add = (ids: readonly string[], status: ToolStatus) => {
    for (const actionId of ids) {
      const action = catalog.actions.get(actionId);
      if (!action?.tool || denied.has(actionId)) continue;
      const caveats = caveatsOf(grant, actionId);
      tools.push(
        isEmptyCaveats(caveats)
          ? plainEntry(action, action.tool, status, catalog)
          : viewEntry(action, action.tool, status, caveats, catalog),
      );
    }
  };
  add(grant.allowed, "callable");
  add(grant.approvalRequired, "requires_approval");
  return { grantId: grant.id, catalogVersion: catalog.version, mode: grant.mode, tools };
}

/**
 * The entry of an action the grant holds without caveats, made once per loaded action and
 * status: with nothing to narrow it is a function of the action alone (its tool, effect and
 * resource), so every view showing the action shares it, frozen with the schemas it owns. A
 * loaded catalog is never changed. Kept in `plainEntries` (`memo.ts`).
 */

/**
 * Whether `projectCatalog` shares this entry between views: then it and its schemas are frozen,
 * and anything derived from the entry alone may be derived once and kept beside it.
 */
export function isSharedEntry(entry: ViewEntry): boolean {
  return sharedEntries.has(entry);
}

function plainEntry(
  action: CatalogAction,
  tool: ToolDescriptor,
  status: ToolStatus,
  catalog: Catalog,
): ViewEntry {
  let byStatus = plainEntries.get(action);
  if (byStatus === undefined) {
    byStatus = {};
    plainEntries.set(action, byStatus);
  }
  let entry = byStatus[status];
  if (entry === undefined) {
    entry = viewEntry(action, tool, status, NO_CAVEATS, catalog);
    deepFreeze(entry.inputSchema);
    if (entry.outputSchema) deepFreeze(entry.outputSchema);
    byStatus[status] = Object.freeze(entry);
    sharedEntries.add(entry);
  }
  return entry;
}

/** One action's entry, its input schema narrowed by `caveats` (the catalog's schemas check bound and enum values). */
function viewEntry(
  action: CatalogAction,
  tool: ToolDescriptor,
  status: ToolStatus,
  caveats: ActionCaveats,
  catalog: Catalog,
): ViewEntry {
  const { name, description, inputSchema, outputSchema, annotations } = tool;
  const narrowed = narrowSchema(inputSchema, caveats, (schema, value) =>
    acceptsValue(catalog.schemas, schema, value),
  );
  return {
    actionId: action.id,
    name,
    description,
    inputSchema: pruneEnums(inputSchema, narrowed, caveats, catalog),
    ...(outputSchema ? { outputSchema: cloneJson(outputSchema) } : {}),
    status,
    effect: action.effect,
    ...(action.resource ? { resourceTemplate: action.resource.template } : {}),
    ...(annotations ? { annotations } : {}),
    descriptorDigest: pinOf(tool),
  };
}

/**
 * Each catalog tool's pin, computed once: a loaded catalog is never changed, and the digest (a
 * canonical JSON and a sha256 of the whole descriptor) was most of a projection's cost per tool.
 * Kept in `descriptorPins` (`memo.ts`).
 */
function pinOf(tool: ToolDescriptor): string {
  let pin = descriptorPins.get(tool);
  if (pin === undefined) {
    pin = descriptorDigest(tool);
    descriptorPins.set(tool, pin);
  }
  return pin;
}

/**
 * For each top-level property with an `enum`, keeps only the values every constraint accepts for
 * that property (a `not`, `anyOf` or pattern the keyword merge could not fold in) and shows the
 * tool's own property with that enum: the remaining values satisfy the constraints, so the
 * constraint keywords — which may quote forbidden values — are not shown. A constraint schema
 * that cannot be compiled standalone is skipped.
 */
function pruneEnums(
  base: JsonObject,
  schema: JsonObject,
  caveats: ActionCaveats,
  catalog: Catalog,
): JsonObject {
  const properties = schema["properties"];
  if (!isJsonObject(properties) || caveats.constraints.length === 0) return schema;
  let changed = false;
  const pruned: JsonObject = { ...properties };
  for (const [name, property] of Object.entries(properties)) {
    if (!isJsonObject(property) || !Array.isArray(property["enum"])) continue;
    const checks = caveats.constraints.flatMap((c) => {
      const sub =
        isJsonObject(c) && isJsonObject(c["properties"]) ? c["properties"][name] : undefined;
      return sub === undefined ? [] : [sub];
    });
    const kept = property["enum"].filter((value) =>
      checks.every((sub) => acceptsValue(catalog.schemas, sub, value)),
    );
    if (checks.length > 0) {
      const own = isJsonObject(base["properties"]) ? base["properties"][name] : undefined;
      setOwn(pruned, name, { ...(isJsonObject(own) ? own : property), enum: kept });
      changed = true;
    }
  }
  return changed ? { ...schema, properties: pruned } : schema;
}

/**
 * The grant as it stands for a run (GetCatalog with a run): an action that a rule over the run
 * now holds for every call — its `when` is `true` and its condition on the run holds (a window
 * depends on each call's arguments and counts, so it is left to Authorize) — moves from allowed
 * to approval-required (`require_approval`) or out of the grant (`deny`). Only ever narrows.
 */
export function grantForRun(grant: TaskGrant, run: RunView, now: number): TaskGrant {
  const held = new Set<string>();
  const denied = new Set<string>();
  for (const actionId of [...grant.allowed, ...grant.approvalRequired]) {
    const rules = Object.hasOwn(grant.caveats, actionId) ? grant.caveats[actionId]?.rules : [];
    for (const rule of rules ?? []) {
      if (rule.run === undefined || rule.when !== true || rule.run.window !== undefined) continue;
      if (!runConditionHolds(rule, grant, {}, now, run)) continue;
      if (rule.then === "deny") denied.add(actionId);
      else held.add(actionId);
    }
  }
  if (held.size === 0 && denied.size === 0) return grant;
  const sorted = (ids: Iterable<string>) => [...new Set(ids)].sort(compareCodeUnits);
  return {
    ...grant,
    allowed: grant.allowed.filter((id) => !held.has(id) && !denied.has(id)),
    approvalRequired: sorted(
      [...grant.approvalRequired, ...grant.allowed.filter((id) => held.has(id))].filter(
        (id) => !denied.has(id),
      ),
    ),
    denied: sorted([...grant.denied, ...denied]),
  };
}
