import { projectCatalog, type CatalogView } from "../core/project.js";
import { withdrawal, withoutWithdrawn } from "../core/withdraw.js";
import type { JsonValue } from "../core/json.js";
import { renderTools, type DialectName } from "../interop/dialects/index.js";
import type { AuthorityContext } from "./context.js";
import { AuthorityError, invalidRequest } from "./errors.js";
import { loadGrant } from "./load-grant.js";

/** A worker's tool catalog: the neutral view and its rendering for the worker's framework. */
export interface CatalogAnswer {
  readonly view: CatalogView;
  readonly tools: JsonValue;
}

/**
 * GetCatalog: the grant projected onto the catalog in force, rendered for `dialect`. A token that
 * does not check out, or a grant whose source the policy in force suspended, is UNAUTHENTICATED
 * with the refusal as its reason.
 */
export async function catalogFor(ctx: AuthorityContext, req: { readonly grantToken: string; readonly dialect: DialectName }): Promise<CatalogAnswer> {
  if (req.grantToken === "") throw invalidRequest("grant_token", "is required");
  const { catalog, policy } = ctx.policySet();
  const check = await loadGrant(ctx, req.grantToken, ctx.now());
  if (!check.ok) throw new AuthorityError("UNAUTHENTICATED", `${check.code}: ${check.message}`, { reason: check.code });
  const w = withdrawal(check.grant, policy);
  if (w.grant !== undefined)
    throw new AuthorityError("UNAUTHENTICATED", `POLICY_WITHDRAWN: the grant's authority has been withdrawn (${w.grant})`, { reason: "POLICY_WITHDRAWN" });
  // Tools the policy in force has withdrawn are absent, as denied ones are.
  const view = projectCatalog(withoutWithdrawn(check.grant, w), catalog);
  return { view, tools: renderTools(view, req.dialect) };
}
