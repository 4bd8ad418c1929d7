import { create } from "@bufbuild/protobuf";
import { isSharedEntry, type CatalogView, type ViewEntry } from "../core/project.js";
import {
  CatalogViewSchema,
  ToolEntrySchema,
  type CatalogView as PbCatalogView,
  type ToolEntry,
} from "../gen/charter/v1/common_pb.js";
import { EFFECT_TO_PROTO, MODE_TO_PROTO, TOOL_STATUS_TO_PROTO } from "./enums.js";
import { sharedEntryMessages } from "./memo.js";

/** A catalog view as its proto message; schemas travel as JSON text. */
export function viewToProto(view: CatalogView): PbCatalogView {
  return create(CatalogViewSchema, {
    grantId: view.grantId,
    catalogVersion: view.catalogVersion,
    mode: MODE_TO_PROTO[view.mode],
    tools: view.tools.map(toolEntryToProto),
  });
}

/**
 * The message of a view entry: one every view of an action shares (`isSharedEntry`) is made once
 * and frozen (`sharedEntryMessages`): it is a function of the entry alone. A grant's own entry is
 * converted each time.
 */
function toolEntryToProto(t: ViewEntry): ToolEntry {
  if (!isSharedEntry(t)) return toolEntry(t);
  let message = sharedEntryMessages.get(t);
  if (message === undefined) {
    message = Object.freeze(toolEntry(t));
    sharedEntryMessages.set(t, message);
  }
  return message;
}

function toolEntry(t: ViewEntry): ToolEntry {
  return create(ToolEntrySchema, {
    actionId: t.actionId,
    name: t.name,
    description: t.description,
    inputSchemaJson: JSON.stringify(t.inputSchema),
    ...(t.outputSchema ? { outputSchemaJson: JSON.stringify(t.outputSchema) } : {}),
    status: TOOL_STATUS_TO_PROTO[t.status],
    effect: EFFECT_TO_PROTO[t.effect],
    ...(t.resourceTemplate === undefined ? {} : { resourceTemplate: t.resourceTemplate }),
    descriptorDigest: t.descriptorDigest,
  });
}
