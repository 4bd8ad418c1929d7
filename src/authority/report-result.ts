import type { Catalog } from "../core/catalog.js";
import { schemaHolds } from "../core/decide.js";
import { reportedLabels } from "../core/run.js";
import { MAX_STEP_ID_LENGTH } from "../core/step.js";
import { parseStrictJson } from "../core/strict-json.js";
import type { ReportOutcome } from "../store/port.js";
import type { AuthorityContext } from "./context.js";
import { AuthorityError, invalidRequest } from "./errors.js";
import { DEFAULT_AUTHORITY_LIMITS } from "./limits.js";
import { loadAncestors, loadGrant } from "./load-grant.js";
import { labelTargets } from "./run-state.js";

/** ReportResult in domain terms: an allowed call's result, as the door that saw it reports it. */
export interface ReportResultRequest {
  readonly grantToken: string;
  readonly runId: string;
  readonly decisionId: string;
  /** The call did not run, or failed: what it counted in windows is released (never a label). */
  readonly failed: boolean;
  /** Labels the result brings in besides the catalog's static ones. */
  readonly labels: readonly string[];
  /** The result's content as JSON text, for the catalog's rules over results ("" or absent: none). */
  readonly resultJson?: string;
}

/** Most labels one report may carry. */
const MAX_REPORTED_LABELS = 32;

/**
 * Reports the result of an allowed call made in a run (DESIGN §7): the labels its content brings
 * in join the run (and, up the delegation tree, the runs the call's grant is bound to), exactly as
 * an allowed call's static labels do; a failed call gives back what it counted in windows. A
 * report only ever adds labels: a report missing, late or refused never makes a run more trusted.
 * Each label must be one the catalog declares; the decision must be an allow of this grant in
 * this run (NOT_FOUND otherwise).
 */
export async function reportResult(
  ctx: AuthorityContext,
  req: ReportResultRequest,
  options: { readonly caller?: string } = {},
): Promise<ReportOutcome> {
  if (req.grantToken === "") throw invalidRequest("grant_token", "is required");
  if (req.runId === "") throw invalidRequest("run_id", "is required");
  if (req.runId.length > MAX_STEP_ID_LENGTH)
    throw invalidRequest("run_id", `is longer than ${MAX_STEP_ID_LENGTH} characters`);
  if (req.decisionId === "") throw invalidRequest("decision_id", "is required");
  if (req.labels.length > MAX_REPORTED_LABELS)
    throw invalidRequest("labels", `at most ${MAX_REPORTED_LABELS} labels per report`);
  const { catalog } = ctx.policySet();
  for (const [i, label] of req.labels.entries())
    if (!catalog.labels.includes(label))
      throw invalidRequest(
        `labels[${i}]`,
        `is not a label the catalog declares (${catalog.labels.join(", ") || "it declares none"})`,
      );
  const now = ctx.now();
  const check = await loadGrant(ctx, req.grantToken, now);
  if (!check.ok)
    throw new AuthorityError("UNAUTHENTICATED", `${check.code}: ${check.message}`, {
      reason: check.code,
    });
  const { grant } = check;
  const ancestors = await loadAncestors(ctx, grant);
  const content = await contentLabels(ctx, catalog, req);
  return ctx.store.reportResult({
    decisionId: req.decisionId,
    grantId: grant.id,
    runId: req.runId,
    failed: req.failed,
    labels: [...new Set([...req.labels, ...content.add])].sort(),
    ...(content.drop.length === 0 ? {} : { narrow: content.drop }),
    writeTo: labelTargets(grant, req.runId),
    at: now,
    expiresAt: Math.max(grant.expiresAt, ...ancestors.map((a) => a.expiresAt)),
    ...(options.caller === undefined ? {} : { caller: options.caller }),
  });
}

/**
 * What the result's content does by the catalog's rules over results (`reportedLabels`): nothing
 * without content; the labels its `ifResult` entries bring in and those its `unlessResult`
 * entries take back (never one the door itself reports). The content is parsed strictly, as
 * arguments are; content that does not parse is INVALID_ARGUMENT and changes nothing.
 */
async function contentLabels(
  ctx: AuthorityContext,
  catalog: Catalog,
  req: ReportResultRequest,
): Promise<{ readonly add: readonly string[]; readonly drop: readonly string[] }> {
  const none = { add: [], drop: [] };
  if (req.resultJson === undefined || req.resultJson === "") return none;
  const parsed = parseStrictJson(
    req.resultJson,
    (ctx.limits ?? DEFAULT_AUTHORITY_LIMITS).arguments,
  );
  if (!parsed.ok) throw invalidRequest("result_json", parsed.message);
  const decision = await ctx.store.getDecision(req.decisionId);
  const action = decision === undefined ? undefined : catalog.actions.get(decision.actionId);
  if (action === undefined) return none;
  const { add, drop } = reportedLabels(action, parsed.value, (schema, value) =>
    schemaHolds(catalog, schema, value),
  );
  return { add, drop: drop.filter((l) => !req.labels.includes(l)) };
}
