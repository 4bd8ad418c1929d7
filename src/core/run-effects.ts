import type { Catalog } from "./catalog.js";
import { schemaHolds } from "./decide.js";
import type { TaskGrant } from "./grant.js";
import type { JsonSchema } from "./json.js";
import { runEffects, type RunEffects } from "./run.js";
import type { Verdict } from "./verdict.js";

const NONE: RunEffects = { labels: [], windows: [] };

/**
 * What a decided call adds to its run when it is committed: for an allow, the labels its result
 * brings in and its window charges; for a dry run's effect_suppressed, the labels alone (the run
 * is judged as if the call had run, but nothing is counted against a window); nothing for a deny
 * or a call held for approval. A schema that cannot be evaluated counts as matching: a label
 * applies, a window counts.
 */
export function decidedRunEffects(
  grant: TaskGrant,
  catalog: Catalog,
  verdict: Verdict,
  args: unknown,
  runId: string,
): RunEffects {
  if (verdict.decision !== "allow" && verdict.decision !== "effect_suppressed") return NONE;
  const action = catalog.actions.get(verdict.actionId);
  if (!action) return NONE;
  const matches = (schema: JsonSchema, value: unknown) =>
    schemaHolds(catalog, schema, value) !== false;
  const approvedRule = verdict.approvalId === undefined ? undefined : verdict.rule;
  const effects = runEffects(grant, action, args, runId, matches, approvedRule);
  if (runId === "" && effects.windows.length === 0) return NONE;
  if (verdict.decision === "effect_suppressed") return { labels: effects.labels, windows: [] };
  return runId === "" ? { labels: [], windows: effects.windows } : effects;
}
