import type pg from "pg";
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
import { inChainUnit, type Chain } from "./chain.js";

type Queryable = pg.Pool | pg.PoolClient;

const LABEL_COLS = "run_id, label, action_id, tool_name, call, at";
const USAGE = `
  SELECT count(*)::integer AS calls, sum(amount) AS sum FROM window_charges
  WHERE window_key = $1 AND at >= $2 AND NOT released`;
// The label's call: the run's call count as it is now (for the call's own run, counted already).
const INSERT_LABEL = `
  INSERT INTO run_labels (grant_id, run_id, label, action_id, tool_name, call, decision_id, at, expires_at)
  VALUES ($1, $2, $3, $4, $5,
    coalesce((SELECT calls FROM run_calls WHERE grant_id = $1 AND run_id = $2), 0), $6, $7, $8)
  ON CONFLICT (grant_id, run_id, label) DO NOTHING`;
const COUNT_CALL = `
  INSERT INTO run_calls (grant_id, run_id, calls, expires_at) VALUES ($1, $2, 1, $3)
  ON CONFLICT (grant_id, run_id) DO UPDATE SET
    calls = run_calls.calls + 1, expires_at = GREATEST(run_calls.expires_at, EXCLUDED.expires_at)`;
const PUT_LAST = `
  INSERT INTO run_last (grant_id, run_id, action_id, at) VALUES ($1, $2, $3, $4)
  ON CONFLICT (grant_id, run_id, action_id) DO UPDATE SET at = GREATEST(run_last.at, EXCLUDED.at)`;
const CHARGE = `
  INSERT INTO window_charges (window_key, decision_id, at, amount, released, expires_at)
  VALUES ($1, $2, $3, $4, FALSE, $5)
  ON CONFLICT (window_key, decision_id) DO NOTHING`;

/** The runs as committed (through the pool) or as the unit of work sees them (its connection, under the chain lock). */
export async function readRunState(db: Queryable, q: RunQuery): Promise<RunSnapshot> {
  const perSource: LabelRow[][] = [];
  for (const s of q.labelsFrom) {
    const { rows } =
      s.runId === undefined
        ? await db.query<LabelRow>(`SELECT ${LABEL_COLS} FROM run_labels WHERE grant_id = $1`, [
            s.grantId,
          ])
        : await db.query<LabelRow>(
            `SELECT ${LABEL_COLS} FROM run_labels WHERE grant_id = $1 AND run_id = $2`,
            [s.grantId, s.runId],
          );
    perSource.push(rows);
  }
  const run = q.run;
  let calls = 0;
  const last: Record<string, number> = {};
  if (run !== undefined) {
    const counted = await db.query<{ calls: number }>(
      "SELECT calls FROM run_calls WHERE grant_id = $1 AND run_id = $2",
      [run.grantId, run.runId],
    );
    calls = counted.rows[0]?.calls ?? 0;
    if (q.after.length > 0) {
      const { rows } = await db.query<{ action_id: string; at: number }>(
        "SELECT action_id, at FROM run_last WHERE grant_id = $1 AND run_id = $2 AND action_id = ANY($3::text[])",
        [run.grantId, run.runId, [...q.after]],
      );
      for (const r of rows) last[r.action_id] = r.at;
    }
  }
  const windows: Record<string, { calls: number; sum: number }> = {};
  for (const w of q.windows) {
    const { rows } = await db.query<UsageRow>(USAGE, [w.key, q.now - w.seconds]);
    windows[w.key] = usageOf(w.key, rows[0]);
  }
  return { labels: mergeLabels(perSource), calls, last, windows };
}

/** Why the effect no longer fits the run as the unit of work (holding the chain lock) reads it now. */
export async function runChanged(
  tx: pg.PoolClient,
  effect: RunEffect,
): Promise<string | undefined> {
  return runChange(effect, await readRunState(tx, recheckQuery(effect)));
}

/** Writes `labels` into every row of `rows`; answers the labels newly added to the first row. */
async function writeLabels(
  tx: pg.PoolClient,
  labels: readonly string[],
  rows: readonly RunRow[],
  source: { decisionId: string; actionId: string; toolName: string; at: number },
  expiresAt: number,
): Promise<string[]> {
  const added: string[] = [];
  for (const [i, row] of rows.entries())
    for (const label of labels) {
      const { rowCount } = await tx.query(INSERT_LABEL, [
        row.grantId,
        row.runId,
        label,
        source.actionId,
        source.toolName,
        source.decisionId,
        source.at,
        expiresAt,
      ]);
      if (i === 0 && rowCount === 1) added.push(label);
    }
  return added;
}

/** Writes an allowed (or dry-run) decision's effect on its runs, in the decision's unit of work. */
export async function applyRunEffect(
  tx: pg.PoolClient,
  effect: RunEffect,
  record: DecisionRecord,
): Promise<void> {
  const own = effect.run;
  if (own !== undefined) {
    await tx.query(COUNT_CALL, [own.grantId, own.runId, effect.expiresAt]);
    await tx.query(PUT_LAST, [own.grantId, own.runId, own.actionId, record.decidedAt]);
  }
  await writeLabels(
    tx,
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
    await tx.query(CHARGE, [
      c.key,
      record.decisionId,
      record.decidedAt,
      c.amount,
      record.decidedAt + c.seconds,
    ]);
}

/**
 * The run part of the PostgreSQL store. Reads go through the pool (committed state); a report is
 * a unit of work under the chain lock, like every write of the runs: the decision's commit reads
 * the run again under the same lock, so across replicas no two units interleave their check and
 * write.
 */
export function postgresRunStore(chain: Chain): RunStore {
  return {
    readRun: (query) => readRunState(chain.pool, query),
    reportResult: (report) =>
      inChainUnit(chain, async (unit) => {
        const decided = await unit.tx.query<ReportedDecision>(
          "SELECT decision, decided_at, grant_id, run_id, action_id, tool_name FROM decisions WHERE decision_id = $1",
          [report.decisionId],
        );
        const row = checkReported(report, decided.rows[0]);
        const own = report.writeTo[0];
        const narrowed: string[] = [];
        const narrow = report.narrow ?? [];
        if (own !== undefined && narrow.length > 0) {
          // A decision of the run recorded after (or in the same second as) the reported one.
          const later = await unit.tx.query(
            `SELECT 1 FROM decisions
             WHERE grant_id = $1 AND run_id = $2 AND decided_at >= $3 AND decision_id <> $4 LIMIT 1`,
            [own.grantId, own.runId, row.decided_at, report.decisionId],
          );
          if (later.rowCount === 0)
            for (const label of narrow) {
              const dropped = await unit.tx.query(
                "DELETE FROM run_labels WHERE grant_id = $1 AND run_id = $2 AND label = $3 AND decision_id = $4",
                [own.grantId, own.runId, label, report.decisionId],
              );
              if ((dropped.rowCount ?? 0) > 0) narrowed.push(label);
            }
        }
        const added = await writeLabels(
          unit.tx,
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
        const released = report.failed
          ? ((
              await unit.tx.query(
                "UPDATE window_charges SET released = TRUE WHERE decision_id = $1 AND NOT released",
                [report.decisionId],
              )
            ).rowCount ?? 0)
          : 0;
        await unit.append(resultAudit(report, added, narrowed));
        return report.narrow === undefined ? { added, released } : { added, released, narrowed };
      }),
  };
}
