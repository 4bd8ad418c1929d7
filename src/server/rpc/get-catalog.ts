import { projectCatalog } from "../../core/project.js";
import type { CatalogService } from "../../gen/charter/v1/catalog_pb.js";
import { Dialect } from "../../gen/charter/v1/common_pb.js";
import { renderTools, type DialectName } from "../../interop/dialects.js";
import { viewToProto } from "../../interop/view-codec.js";
import type { ServerContext } from "../context.js";
import { checkGrantToken } from "../grant-check.js";
import type { ServiceHandlers } from "../router.js";
import { RpcError, invalidField } from "../rpc-error.js";

const DIALECTS: Readonly<Record<Dialect, DialectName>> = {
  [Dialect.UNSPECIFIED]: "neutral",
  [Dialect.NEUTRAL]: "neutral",
  [Dialect.OPENAI_CHAT]: "openai_chat",
  [Dialect.OPENAI_RESPONSES]: "openai_responses",
  [Dialect.ANTHROPIC]: "anthropic",
  [Dialect.MCP]: "mcp",
  [Dialect.GEMINI]: "gemini",
};

/** GetCatalog: the grant projected onto the catalog, rendered for the worker's framework. */
export function getCatalog(ctx: ServerContext): ServiceHandlers<typeof CatalogService>["getCatalog"] {
  return async (req) => {
    if (req.grantToken === "") throw invalidField("grant_token", "is required");
    const dialect = DIALECTS[req.dialect];
    if (dialect === undefined) throw invalidField("dialect", `unknown value ${String(req.dialect)}`);
    const check = await checkGrantToken(ctx, req.grantToken, ctx.now());
    if (!check.ok) throw new RpcError("UNAUTHENTICATED", `${check.code}: ${check.message}`);
    const view = projectCatalog(check.grant, ctx.authority().catalog);
    return { view: viewToProto(view), renderedToolsJson: JSON.stringify(renderTools(view, dialect)) };
  };
}
