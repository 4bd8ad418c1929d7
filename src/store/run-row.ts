import type { SeenLabel, WindowUsage } from "../core/run.js";
import { sortedLabels } from "./decision-row.js";
import { StoreError, type DecisionEffects, type DecisionRecord } from "./port.js";
import type { ResultReport, RunEffect, RunQuery, RunSnapshot } from "./port-runs.js";

// What both adapters share of the run tables (DESIGN §7): how a snapshot is put together from
// the rows read, and when a decision's run effect no longer fits the run as it is now.

/** A row of `run_labels` as every adapter reads it for a snapshot. */
export interface LabelRow {
  readonly run_id: string;
  readonly label: string;
  readonly action_id: string;
  readonly tool_name: string;
  readonly call: number;
  readonly at: number;
}

/** A window's usage as read: `calls` and `sum` of the unreleased charges in it. */
export interface UsageRow {
  readonly calls: number;
  readonly sum: number | null;
}

/**
 * The labels of every source, each once with its first sighting: the earliest `at`, then the
 * earlier source in `labelsFrom` order, then the lower call and run id (so both adapters agree
 * whatever order their rows come in); sorted by label.
 */
export function mergeLabels(perSource: readonly (readonly LabelRow[])[]): SeenLabel[] {
  const first = new Map<string, { row: LabelRow; source: number }>();
  perSource.forEach((rows, source) => {
    for (const row of rows) {
      if (!Number.isSafeInteger(row.call) || !Number.isSafeInteger(row.at))
        throw new StoreError("CORRUPT", `run label ${row.label}: call or time is not a number`);
      const seen = first.get(row.label);
      if (seen === undefined || earlier(row, source, seen.row, seen.source))
        first.set(row.label, { row, source });
    }
  });
  return [...first.values()]
    .map(({ row }) => ({
      label: row.label,
      actionId: row.action_id,
      toolName: row.tool_name,
      call: row.call,
    }))
    .sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}

function earlier(a: LabelRow, sa: number, b: LabelRow, sb: number): boolean {
  if (a.at !== b.at) return a.at < b.at;
  if (sa !== sb) return sa < sb;
  if (a.call !== b.call) return a.call < b.call;
  return a.run_id < b.run_id;
}

/** A window's usage from its row (no charges: zero). */
export function usageOf(key: string, row: UsageRow | undefined): WindowUsage {
  const calls = row?.calls ?? 0;
  const sum = row?.sum ?? 0;
  if (!Number.isSafeInteger(calls) || typeof sum !== "number" || !Number.isFinite(sum))
    throw new StoreError("CORRUPT", `window ${key}: usage is not a number`);
  return { calls, sum };
}

/** The windows an effect's bounded charges must be read in again before they are made. */
export function boundedWindows(effect: RunEffect): RunQuery["windows"] {
  const windows = new Map<string, number>();
  for (const c of effect.windows)
    if (c.maxCalls !== undefined || c.maxSum !== undefined) windows.set(c.key, c.seconds);
  return [...windows].map(([key, seconds]) => ({ key, seconds }));
}

/**
 * The query a unit of work reads again before it writes an effect: the labels and last times the
 * decision judged, and the windows of its bounded charges (their usage is all that is checked).
 */
export function recheckQuery(effect: RunEffect): RunQuery {
  return { ...effect.query, windows: boundedWindows(effect) };
}

/**
 * Why `effect` no longer fits the run as read again in the unit of work (`now`), or undefined
 * when it does: a label the decision did not see, an action of `after` last allowed at another
 * time than judged (or only now, or no more), a bounded window without room for its charge. The
 * detail names labels, actions and windows — never an argument value (nor a window's amount).
 */
export function runChange(effect: RunEffect, now: RunSnapshot): string | undefined {
  const judged = new Set(effect.judged.labels);
  const fresh = now.labels.filter((l) => !judged.has(l.label)).map((l) => l.label);
  if (fresh.length > 0) return `the run has seen ${fresh.join(", ")} since the call was decided`;
  for (const action of effect.query.after) {
    const was = Object.hasOwn(effect.judged.last, action) ? effect.judged.last[action] : undefined;
    const is = Object.hasOwn(now.last, action) ? now.last[action] : undefined;
    if (was !== is) return `${action} was allowed in the run since the call was decided`;
  }
  // Charges of one key in one effect count together.
  const added = new Map<string, WindowUsage>();
  for (const c of effect.windows) {
    const used = added.get(c.key) ?? now.windows[c.key] ?? { calls: 0, sum: 0 };
    const next = { calls: used.calls + 1, sum: used.sum + c.amount };
    added.set(c.key, next);
    if (c.maxCalls !== undefined && next.calls > c.maxCalls)
      return `window ${c.key} has no room for another call (${c.maxCalls} calls)`;
    if (c.maxSum !== undefined && next.sum > c.maxSum)
      return `window ${c.key} has no room for the call's amount (a total of ${c.maxSum})`;
  }
  return undefined;
}

/** The labels to write, each once, in order. */
export function labelsToWrite(labels: readonly string[]): string[] {
  return sortedLabels(labels);
}

/** The `result_reported` audit record: ids, the failure flag and the labels added — never argument values. */
export function resultAudit(
  report: ResultReport,
  added: readonly string[],
  narrowed: readonly string[] = [],
) {
  return {
    at: report.at,
    kind: "result_reported" as const,
    decisionId: report.decisionId,
    grantId: report.grantId,
    runId: report.runId,
    failed: report.failed,
    labels: [...added],
    ...(narrowed.length === 0 ? {} : { narrowed: [...narrowed] }),
    ...(report.caller === undefined ? {} : { caller: report.caller }),
  };
}

/** The decision a report names, as far as a report needs it. */
export interface ReportedDecision {
  readonly decision: string;
  readonly decided_at: number;
  readonly grant_id: string;
  readonly run_id: string | null;
  readonly action_id: string;
  readonly tool_name: string;
}

/** Refuses a report for a decision that is not an allow of its grant in its run (NOT_FOUND). */
export function checkReported(
  report: ResultReport,
  row: ReportedDecision | undefined,
): ReportedDecision {
  if (
    row === undefined ||
    row.decision !== "allow" ||
    row.grant_id !== report.grantId ||
    row.run_id !== report.runId
  )
    throw new StoreError(
      "NOT_FOUND",
      `decision ${report.decisionId} is not an allow of grant ${report.grantId} in run ${report.runId}`,
    );
  return row;
}

/** The run effect a record carries out: only an allow's, or a dry run's effect_suppressed. */
export function runEffectOf(
  record: DecisionRecord,
  effects: DecisionEffects,
): DecisionEffects["run"] {
  return record.decision === "allow" || record.decision === "effect_suppressed"
    ? effects.run
    : undefined;
}
