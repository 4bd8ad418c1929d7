import type { Catalog, Effect } from "./catalog.js";
import { caveatsOf, type TaskGrant } from "./grant.js";
import { cloneJson, type JsonObject } from "./json.js";
import { narrowSchema } from "./narrow.js";
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
 * a tool are structurally absent: nothing of theirs appears anywhere in the view.
 */
export function projectCatalog(grant: TaskGrant, catalog: Catalog): CatalogView {
  const tools: ViewEntry[] = [];
  const denied = new Set(grant.denied);
  const add = (ids: readonly string[], status: ToolStatus) => {
    for (const actionId of ids) {
      const action = catalog.actions.get(actionId);
      if (!action?.tool || denied.has(actionId)) continue;
      const { name, description, inputSchema, outputSchema } = action.tool;
      tools.push({
        actionId,
        name,
        description,
        inputSchema: narrowSchema(inputSchema, caveatsOf(grant, actionId)),
        ...(outputSchema ? { outputSchema: cloneJson(outputSchema) } : {}),
        status,
        effect: action.effect,
        ...(action.resource ? { resourceTemplate: action.resource.template } : {}),
      });
    }
  };
  add(grant.allowed, "callable");
  add(grant.approvalRequired, "requires_approval");
  return { grantId: grant.id, catalogVersion: catalog.version, mode: grant.mode, tools };
}
