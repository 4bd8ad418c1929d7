import { catalogFor, type AuthorityContext } from "../../authority/index.js";
import type { CatalogService } from "../../gen/charter/v1/catalog_pb.js";
import { DecodeError } from "../../interop/decode-error.js";
import { dialectFromProto } from "../../interop/enums.js";
import { viewToProto } from "../../interop/view-codec.js";
import type { ServiceHandlers } from "../router.js";

/** GetCatalog: the grant projected onto the catalog, rendered for the worker's framework. */
export function getCatalog(ctx: AuthorityContext): ServiceHandlers<typeof CatalogService>["getCatalog"] {
  return async (req) => {
    const dialect = dialectFromProto(req.dialect);
    if (dialect === undefined) throw new DecodeError("dialect", `unknown value ${String(req.dialect)}`);
    const { view, tools } = await catalogFor(ctx, { grantToken: req.grantToken, dialect });
    return { view: viewToProto(view), renderedToolsJson: JSON.stringify(tools) };
  };
}
