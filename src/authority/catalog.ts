import { grantForRun, projectCatalog, type CatalogView } from "../core/project.js";
import { grantWithdrawal, withdrawal, withoutWithdrawn } from "../core/withdraw.js";
import type { JsonValue } from "../core/json.js";
import { renderTools, toolsJson, type DialectName } from "../interop/dialects/index.js";
import type { AuthorityContext, PolicySet } from "./context.js";
import { AuthorityError, invalidRequest } from "./errors.js";
import { loadGrantInForce } from "./load-grant.js";
import { MAX_STEP_ID_LENGTH } from "../core/step.js";
import { readRunView } from "./run-state.js";

/** A worker's tool catalog: the neutral view and its rendering for the worker's framework. Shared by every caller of the same grant: never change it. */
export interface CatalogAnswer {
  readonly view: CatalogView;
  readonly tools: JsonValue;
  /** `tools` as JSON text (what GetCatalog sends as `rendered_tools_json`). */
  readonly toolsJson: string;
}

/**
 * GetCatalog: the grant projected onto the catalog in force, rendered for `dialect`. A token that
 * does not check out, or a grant whose source the policy in force suspended, is UNAUTHENTICATED
 * with the refusal as its reason. Token, revocation and the kill switch are checked on every
 * call; the projection and its rendering — a pure function of the grant (the token), the pair in
 * force and the dialect — come from the context's bounded cache (`ctx.caches.catalogs`) after
 * the first call.
 *
 * The cache is keyed by dialect and grant id, and an entry answers only the very grant object it
 * was rendered for: the verifier hands back one frozen object per token it holds (keyed by the
 * token's sha256), so the object stands for the whole token and is compared without hashing the
 * token's text again. Another token naming the same grant id verifies into another object and
 * never gets the entry (its rendering replaces it). A grant the verifier did not keep is a fresh
 * object every call, and is rendered every call.
 */
export async function catalogFor(
  ctx: AuthorityContext,
  req: { readonly grantToken: string; readonly dialect: DialectName; readonly runId?: string },
): Promise<CatalogAnswer> {
  if (req.grantToken === "") throw invalidRequest("grant_token", "is required");
  if ((req.runId ?? "").length > MAX_STEP_ID_LENGTH)
    throw invalidRequest("run_id", `is longer than ${MAX_STEP_ID_LENGTH} characters`);
  const policySet = ctx.policySet();
  const check = await loadGrantInForce(ctx, req.grantToken, ctx.now(), policySet.policy);
  if (!check.ok)
    throw new AuthorityError("UNAUTHENTICATED", `${check.code}: ${check.message}`, {
      reason: check.code,
    });
  // The kill switch, every call: the whole grant's withdrawal. Single actions a source of the
  // pair denies are a function of the grant and the pair, so they are part of the cached rendering.
  const withdrawn = grantWithdrawal(check.grant, policySet.policy);
  if (withdrawn !== undefined)
    throw new AuthorityError(
      "UNAUTHENTICATED",
      `POLICY_WITHDRAWN: the grant's authority has been withdrawn (${withdrawn})`,
      { reason: "POLICY_WITHDRAWN" },
    );
  // For a run: the grant as the run's labels and earlier calls leave it, rendered for this call only.
  if (req.runId !== undefined && req.runId !== "") {
    const run = await readRunView(ctx, check.grant, req.runId, ctx.now());
    const grant = grantForRun(check.grant, run, ctx.now());
    if (grant !== check.grant) {
      const view = projectCatalog(
        withoutWithdrawn(grant, withdrawal(grant, policySet.policy)),
        policySet.catalog,
      );
      const tools = renderTools(view, req.dialect);
      return { view, tools, toolsJson: toolsJson(tools) };
    }
  }
  const cache = ctx.caches.catalogs(policySet);
  const key = `${req.dialect}\n${check.grant.id}`;
  const cached = cache.get(key);
  if (cached !== undefined && cached.grant === check.grant) return cached.answer;
  // Tools the policy in force has withdrawn are absent, as denied ones are.
  const view = projectCatalog(
    withoutWithdrawn(check.grant, withdrawal(check.grant, policySet.policy)),
    policySet.catalog,
  );
  const tools = renderTools(view, req.dialect);
  const answer: CatalogAnswer = { view, tools, toolsJson: toolsJson(tools) };
  cache.set(key, {
    grant: check.grant,
    answer,
    bytes: 2 * req.grantToken.length + 6 * answer.toolsJson.length + 1024,
  });
  return answer;
}

/** How full a context's rendered-catalog cache of a catalog/policy pair is (for metrics and tests). */
export function catalogCacheSize(
  ctx: Pick<AuthorityContext, "caches" | "policySet">,
  policySet: PolicySet = ctx.policySet(),
): { readonly entries: number; readonly bytes: number } {
  const cache = ctx.caches.catalogs(policySet);
  return { entries: cache.size, bytes: cache.bytes };
}
