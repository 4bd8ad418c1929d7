import { projectCatalog } from "../../core/project.js";
import type { CatalogService } from "../../gen/charter/v1/catalog_pb.js";
import { renderTools } from "../../interop/dialects.js";
import { dialectFromProto } from "../../interop/enums.js";
import { viewToProto } from "../../interop/view-codec.js";
import type { ServerContext } from "../context.js";
import { checkGrantToken } from "../grant-check.js";
import type { ServiceHandlers } from "../router.js";
import { RpcError, invalidField } from "../rpc-error.js";

/** GetCatalog: the grant projected onto the catalog, rendered for the worker's framework. */
export function getCatalog(ctx: ServerContext): ServiceHandlers<typeof CatalogService>["getCatalog"] {
  return async (req) => {
    if (req.grantToken === "") throw invalidField("grant_token", "is required");
    const dialect = dialectFromProto(req.dialect);
    if (dialect === undefined) throw invalidField("dialect", `unknown value ${String(req.dialect)}`);
    const check = await checkGrantToken(ctx, req.grantToken, ctx.now());
    if (!check.ok) throw new RpcError("UNAUTHENTICATED", `${check.code}: ${check.message}`);
    const view = projectCatalog(check.grant, ctx.authority().catalog);
    return { view: viewToProto(view), renderedToolsJson: JSON.stringify(renderTools(view, dialect)) };
  };
}
