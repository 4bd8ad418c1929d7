import type { Database } from "better-sqlite3";
import type { DecisionRecord } from "../port.js";
import type { RunEffect, RunQuery, RunRow, RunSnapshot, RunStore } from "../port-runs.js";
import {
  checkReported,
  labelsToWrite,
  mergeLabels,
  recheckQuery,
  resultAudit,
  runChange,
  usageOf,
  type LabelRow,
  type ReportedDecision,
  type UsageRow,
} from "../run-row.js";
import type { AuditAppend } from "./audit.js";
import type { GroupCommit } from "./group-commit.js";

/** What the decision half asks of the runs inside its unit of work. */
export interface SqliteRuns {
  readonly store: RunStore;
  /** Why the effect no longer fits the run as it is now (read in the unit: earlier units of the group included). */
  readonly changed: (effect: RunEffect) => string | undefined;
  /** Writes an allowed (or dry-run) decision's effect on its runs. */
  readonly apply: (effect: RunEffect, record: DecisionRecord) => void;
  /** Deletes the run rows and window charges that expired before `before`. */
  readonly prune: (before: number) => void;
}

/**
 * The run half of the SQLite store. Every write happens inside a unit of work of the group
 * commit, as plain SQL on the one connection: a later unit of the same group reads what an
 * earlier one wrote, a unit rolled back takes its writes with it, and the group's write lock keeps
 * other connections out between the read again and the write. Reads outside a unit read what is
 * committed.
 */
export function sqliteRuns(db: Database, group: GroupCommit, append: AuditAppend): SqliteRuns {
  const LABEL_COLS = "run_id, label, action_id, tool_name, call, at";
  const labelsOfRun = db.prepare<[string, string], LabelRow>(
    `SELECT ${LABEL_COLS} FROM run_labels WHERE grant_id = ? AND run_id = ?`,
  );
  const labelsOfGrant = db.prepare<[string], LabelRow>(
    `SELECT ${LABEL_COLS} FROM run_labels WHERE grant_id = ?`,
  );
  const callsOf = db
    .prepare<[string, string], number>(
      "SELECT calls FROM run_calls WHERE grant_id = ? AND run_id = ?",
    )
    .pluck();
  const lastOf = db
    .prepare<[string, string, string], number>(
      "SELECT at FROM run_last WHERE grant_id = ? AND run_id = ? AND action_id = ?",
    )
    .pluck();
  const usage = db.prepare<[string, number], UsageRow>(`
    SELECT count(*) AS calls, sum(amount) AS sum FROM window_charges
    WHERE window_key = ? AND at >= ? AND released = 0`);
  // The label's call: the run's call count as it is now (for the call's own run, counted already).
  const insertLabel = db.prepare<
    [string, string, string, string, string, string, string, string, number, number],
    never
  >(`
    INSERT INTO run_labels (grant_id, run_id, label, action_id, tool_name, call, decision_id, at, expires_at)
    VALUES (?, ?, ?, ?, ?,
      coalesce((SELECT calls FROM run_calls WHERE grant_id = ? AND run_id = ?), 0), ?, ?, ?)
    ON CONFLICT (grant_id, run_id, label) DO NOTHING`);
  const countCall = db.prepare<[string, string, number], never>(`
    INSERT INTO run_calls (grant_id, run_id, calls, expires_at) VALUES (?, ?, 1, ?)
    ON CONFLICT (grant_id, run_id) DO UPDATE SET
      calls = calls + 1, expires_at = max(expires_at, excluded.expires_at)`);
  const putLast = db.prepare<[string, string, string, number], never>(`
    INSERT INTO run_last (grant_id, run_id, action_id, at) VALUES (?, ?, ?, ?)
    ON CONFLICT (grant_id, run_id, action_id) DO UPDATE SET at = max(at, excluded.at)`);
  const charge = db.prepare<[string, string, number, number, number], never>(`
    INSERT INTO window_charges (window_key, decision_id, at, amount, released, expires_at)
    VALUES (?, ?, ?, ?, 0, ?)
    ON CONFLICT (window_key, decision_id) DO NOTHING`);
  const decisionOf = db.prepare<[string], ReportedDecision>(
    "SELECT decision, decided_at, grant_id, run_id, action_id, tool_name FROM decisions WHERE decision_id = ?",
  );
  // A decision of the run recorded after (or in the same second as) the reported one.
  const laterDecision = db
    .prepare<[string, string, number, string], number>(
      `SELECT 1 FROM decisions
       WHERE grant_id = ? AND run_id = ? AND decided_at >= ? AND decision_id <> ? LIMIT 1`,
    )
    .pluck();
  const dropLabel = db.prepare<[string, string, string, string], never>(
    "DELETE FROM run_labels WHERE grant_id = ? AND run_id = ? AND label = ? AND decision_id = ?",
  );
  const release = db.prepare<[string], never>(
    "UPDATE window_charges SET released = 1 WHERE decision_id = ? AND released = 0",
  );
  const pruneLabels = db.prepare<[number], never>("DELETE FROM run_labels WHERE expires_at < ?");
  const pruneLast = db.prepare<[number], never>(`
    DELETE FROM run_last WHERE EXISTS (
      SELECT 1 FROM run_calls AS c
      WHERE c.grant_id = run_last.grant_id AND c.run_id = run_last.run_id AND c.expires_at < ?)`);
  const pruneCalls = db.prepare<[number], never>("DELETE FROM run_calls WHERE expires_at < ?");
  const pruneCharges = db.prepare<[number], never>(
    "DELETE FROM window_charges WHERE expires_at < ?",
  );

  const read = (q: RunQuery): RunSnapshot => {
    const labels = mergeLabels(
      q.labelsFrom.map((s) =>
        s.runId === undefined ? labelsOfGrant.all(s.grantId) : labelsOfRun.all(s.grantId, s.runId),
      ),
    );
    const run = q.run;
    const calls = run === undefined ? 0 : (callsOf.get(run.grantId, run.runId) ?? 0);
    const last: Record<string, number> = {};
    if (run !== undefined)
      for (const a of q.after) {
        const at = lastOf.get(run.grantId, run.runId, a);
        if (at !== undefined) last[a] = at;
      }
    const windows: Record<string, { calls: number; sum: number }> = {};
    for (const w of q.windows) windows[w.key] = usageOf(w.key, usage.get(w.key, q.now - w.seconds));
    return { labels, calls, last, windows };
  };

  /** Writes `labels` into every row of `rows`; answers the labels newly added to the first row. */
  const writeLabels = (
    labels: readonly string[],
    rows: readonly RunRow[],
    source: { decisionId: string; actionId: string; toolName: string; at: number },
    expiresAt: number,
  ): string[] => {
    const added: string[] = [];
    rows.forEach((row, i) => {
      for (const label of labels) {
        const { changes } = insertLabel.run(
          row.grantId,
          row.runId,
          label,
          source.actionId,
          source.toolName,
          row.grantId,
          row.runId,
          source.decisionId,
          source.at,
          expiresAt,
        );
        if (i === 0 && changes === 1) added.push(label);
      }
    });
    return added;
  };

  const apply = (effect: RunEffect, record: DecisionRecord) => {
    const own = effect.run;
    if (own !== undefined) {
      countCall.run(own.grantId, own.runId, effect.expiresAt);
      putLast.run(own.grantId, own.runId, own.actionId, record.decidedAt);
    }
    writeLabels(
      labelsToWrite(effect.labels),
      effect.writeTo,
      {
        decisionId: record.decisionId,
        actionId: own?.actionId ?? record.actionId,
        toolName: own?.toolName ?? record.toolName,
        at: record.decidedAt,
      },
      effect.expiresAt,
    );
    for (const c of effect.windows)
      charge.run(
        c.key,
        record.decisionId,
        record.decidedAt,
        c.amount,
        record.decidedAt + c.seconds,
      );
  };

  return {
    changed: (effect) => runChange(effect, read(recheckQuery(effect))),
    apply,
    prune(before) {
      pruneLabels.run(before);
      pruneLast.run(before);
      pruneCalls.run(before);
      pruneCharges.run(before);
    },
    store: {
      async readRun(query) {
        return read(query);
      },
      reportResult: (report) =>
        group.run(() => {
          const row = checkReported(report, decisionOf.get(report.decisionId));
          const own = report.writeTo[0];
          const narrowed: string[] = [];
          const narrow = report.narrow ?? [];
          if (
            own !== undefined &&
            narrow.length > 0 &&
            laterDecision.get(own.grantId, own.runId, row.decided_at, report.decisionId) ===
              undefined
          )
            for (const label of narrow)
              if (dropLabel.run(own.grantId, own.runId, label, report.decisionId).changes > 0)
                narrowed.push(label);
          const added = writeLabels(
            labelsToWrite(report.labels),
            report.writeTo,
            {
              decisionId: report.decisionId,
              actionId: row.action_id,
              toolName: row.tool_name,
              at: report.at,
            },
            report.expiresAt,
          );
          const released = report.failed ? release.run(report.decisionId).changes : 0;
          append(resultAudit(report, added, narrowed));
          return report.narrow === undefined ? { added, released } : { added, released, narrowed };
        }),
    },
  };
}
