import type { Catalog } from "../core/catalog.js";
import { ANY_RUN, type TaskGrant } from "../core/grant.js";
import { decidedRunEffects } from "../core/run-effects.js";
import { runNeeds, type RunView } from "../core/run.js";
import type { Verdict } from "../core/verdict.js";
import type { LabelSource, RunEffect, RunQuery, RunRow } from "../store/port.js";
import type { AdmittedCall } from "./admit.js";
import type { AuthorityContext } from "./context.js";

/**
 * The run a call is decided in, as read from the store just before deciding (DESIGN §7): the
 * query (re-read by the commit's unit of work, which refuses a decision made on a run that has
 * changed since) and the view the pure decide judges on. Undefined for a call that neither
 * belongs to a run nor counts in a window.
 */
export interface RunRead {
  readonly query: RunQuery;
  readonly view: RunView;
}

/** The run id a call belongs to ("" without one): its step's. */
export function runIdOf(call: AdmittedCall): string {
  return call.ask?.runId ?? "";
}

/**
 * Where a call of `grant` in `runId` reads its labels: its own run, its grant's row for
 * sub-agents delegated without a run (their labels join every run of the grant), and up the
 * delegation tree the run each grant was started from — or, for a grant delegated without one,
 * every run of the ancestor. A sub-agent starts with what its parent's run has seen.
 */
export function labelSources(grant: TaskGrant, runId: string): LabelSource[] {
  const out: LabelSource[] = [
    { grantId: grant.id, runId },
    { grantId: grant.id, runId: ANY_RUN },
  ];
  const links = linksOf(grant);
  for (let i = grant.chain.length - 1; i >= 0; i--) {
    const ancestor = grant.chain[i] as string;
    const link = links[i] as string;
    if (link === ANY_RUN) out.push({ grantId: ancestor });
    else out.push({ grantId: ancestor, runId: link }, { grantId: ancestor, runId: ANY_RUN });
  }
  return out;
}

/** Where an allowed call's labels are written: its own run, then up the tree the run (or "*" row) each grant is bound to. What a sub-agent sees joins its parent's run. */
export function labelTargets(grant: TaskGrant, runId: string): RunRow[] {
  const out: RunRow[] = [{ grantId: grant.id, runId }];
  const links = linksOf(grant);
  for (let i = grant.chain.length - 1; i >= 0; i--)
    out.push({ grantId: grant.chain[i] as string, runId: links[i] as string });
  return out;
}

/** A grant's links to its ancestors' runs; one delegated before links existed is bound to each ancestor as a whole. */
function linksOf(grant: TaskGrant): readonly string[] {
  return grant.chainRuns ?? grant.chain.map(() => ANY_RUN);
}

/** The action a call names, as decide resolves it (a call whose names disagree resolves to none: it is denied anyway). */
function actionIdOf(catalog: Catalog, call: AdmittedCall): string | undefined {
  const { toolName, actionId } = call.request;
  const byTool = toolName === "" ? undefined : catalog.tools.get(toolName);
  const byId = actionId === "" ? undefined : catalog.actions.get(actionId);
  if (byTool && byId && byTool !== byId) return undefined;
  return (byTool ?? byId)?.id;
}

/** A run of `grant` as GetCatalog shows it: its labels and its earlier calls of every action a rule over the run names. */
export async function readRunView(
  ctx: Pick<AuthorityContext, "store">,
  grant: TaskGrant,
  runId: string,
  now: number,
): Promise<RunView> {
  const after = new Set<string>();
  for (const c of Object.values(grant.caveats))
    for (const r of c.rules) for (const a of r.run?.after ?? []) after.add(a);
  const snapshot = await ctx.store.readRun({
    labelsFrom: labelSources(grant, runId),
    run: { grantId: grant.id, runId },
    after: [...after].sort(),
    windows: [],
    now,
  });
  return { runId, ...snapshot };
}

/** Reads the run a call is decided in, or undefined when it neither is in a run nor counts in a window. */
export async function readRunFor(
  ctx: Pick<AuthorityContext, "store">,
  grant: TaskGrant,
  catalog: Catalog,
  call: AdmittedCall,
  now: number,
): Promise<RunRead | undefined> {
  return readRunAt(ctx, grant, actionIdOf(catalog, call), runIdOf(call), now);
}

/**
 * Reads the run a call of `actionId` in `runId` is decided on (`readRunFor`'s read, by names:
 * `charter test` scenarios read it before each call to judge the rules on the same run).
 */
export async function readRunAt(
  ctx: Pick<AuthorityContext, "store">,
  grant: TaskGrant,
  actionId: string | undefined,
  runId: string,
  now: number,
): Promise<RunRead | undefined> {
  const needs = actionId === undefined ? undefined : runNeeds(grant, actionId, runId);
  if (runId === "" && (needs === undefined || needs.windows.length === 0)) return undefined;
  const query: RunQuery = {
    labelsFrom: runId === "" ? [] : labelSources(grant, runId),
    ...(runId === "" ? {} : { run: { grantId: grant.id, runId } }),
    after: runId === "" ? [] : (needs?.after ?? []),
    windows: needs?.windows ?? [],
    now,
  };
  const snapshot = await ctx.store.readRun(query);
  return {
    query,
    view: {
      runId,
      labels: snapshot.labels,
      calls: snapshot.calls,
      last: snapshot.last,
      windows: snapshot.windows,
    },
  };
}

/**
 * What committing `verdict` does to the run it was decided in: checked by the store against the
 * run as it is then (the labels and earlier calls judged on, the windows' room), and written in
 * the same unit of work as the decision. Undefined when the verdict changes nothing of a run.
 */
export function runEffectFor(
  grant: TaskGrant,
  catalog: Catalog,
  call: AdmittedCall,
  read: RunRead | undefined,
  verdict: Verdict,
  expiresAt: number,
): RunEffect | undefined {
  if (read === undefined || !call.args.ok) return undefined;
  // A deny or a held call changes nothing of a run.
  if (verdict.decision !== "allow" && verdict.decision !== "effect_suppressed") return undefined;
  const runId = read.view.runId;
  const effects = decidedRunEffects(grant, catalog, verdict, call.args.value, runId);
  const inRun = runId !== "";
  if (!inRun && effects.windows.length === 0) return undefined;
  return {
    query: read.query,
    judged: { labels: read.view.labels.map((l) => l.label), last: read.view.last },
    ...(inRun
      ? {
          run: { grantId: grant.id, runId, actionId: verdict.actionId, toolName: verdict.toolName },
        }
      : {}),
    labels: effects.labels,
    writeTo: inRun ? labelTargets(grant, runId) : [],
    windows: effects.windows,
    expiresAt,
  };
}
