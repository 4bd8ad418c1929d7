import {
  DECISION_COLUMNS,
  REPLAY_COLUMNS,
  replayRow,
  type ReplayRowColumns,
  decisionAudit,
  decisionRecord,
  decisionRow,
  recommitOutcome,
  type DecisionRow,
} from "../decision-row.js";
import type {
  CommitOutcome,
  CommitRefusalCode,
  DecisionEffects,
  DecisionRecord,
  DecisionStore,
  StepStore,
} from "../port.js";
import {
  heldStep,
  replacesHeld,
  selectStepSql,
  STEP_COLUMNS,
  stepRow,
  type HeldStepRow,
} from "../step-row.js";
import { consumeApproval, expireDue } from "./approvals.js";
import { budgetUsage, chargeBudget } from "./budgets.js";
import { runEffectOf } from "../run-row.js";
import { inChainUnit, type ChainUnit, type Chain } from "./chain.js";
import { applyRunEffect, runChanged } from "./runs.js";

const INSERT = `
  INSERT INTO decisions (${DECISION_COLUMNS.join(", ")})
  VALUES (${DECISION_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})`;
const SELECT = `SELECT ${DECISION_COLUMNS.join(", ")} FROM decisions WHERE decision_id = $1`;
const SELECT_STEP = selectStepSql((n) => `$${n}`);
// A replaceable held step (a require_approval superseded by the approved call) is overwritten in place.
const PUT_STEP = `
  INSERT INTO decision_steps (${STEP_COLUMNS.join(", ")}) VALUES (${STEP_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})
  ON CONFLICT (grant_id, run_id, step_key) DO UPDATE SET ${STEP_COLUMNS.slice(3)
    .map((c) => `${c} = EXCLUDED.${c}`)
    .join(", ")}`;

type Refusal = { readonly reasonCode: CommitRefusalCode; readonly detail: string };

/** An allow's effects, in order: the approval, then every budget counter; the first that cannot be had refuses. */
async function effectsOf(
  unit: ChainUnit,
  record: DecisionRecord,
  effects: DecisionEffects,
): Promise<Refusal | undefined> {
  if (effects.approval) {
    const { approvalId, callDigest } = effects.approval;
    const problem = await consumeApproval(unit, approvalId, callDigest, record.decidedAt);
    if (problem === "expired")
      return { reasonCode: "APPROVAL_EXPIRED", detail: `approval ${approvalId} expired` };
    if (problem !== undefined)
      return { reasonCode: "APPROVAL_CONSUMED", detail: `approval ${approvalId} is ${problem}` };
  }
  if (effects.budget) {
    const spent = await chargeBudget(unit.tx, effects.budget);
    if (spent !== undefined) return { reasonCode: "LIMIT_EXCEEDED", detail: spent };
  }
  return undefined;
}

/**
 * The decision part of the PostgreSQL store; errors are left raw for openPostgresStore to
 * translate. A commit is one transaction under the chain lock (`inChainUnit`): the allow's
 * effects in a savepoint (approval consumption, then every budget counter; a refusal rolls them
 * all back and the record is written as a deny with the refusal's code), the decision row and its
 * audit record. A run effect is checked against the run read again under the lock (after the
 * step, before the approval and the budget: `run_changed` writes nothing) and written only when
 * the record commits as given. COMMIT returns once PostgreSQL has made it durable, so no verdict
 * leaves before its record. A rerun after a deadlock or a lost connection is safe: it is
 * idempotent by decision id.
 */
export function postgresDecisionStore(chain: Chain): DecisionStore & StepStore {
  const { pool } = chain;
  return {
    commitDecision: (record, effects = {}) =>
      inChainUnit(chain, async (unit): Promise<CommitOutcome> => {
        const row = decisionRow(record);
        const stored = (await unit.tx.query<DecisionRow>(SELECT, [row.decision_id])).rows[0];
        if (stored !== undefined) return recommitOutcome(stored, row);
        // The step first, under the chain lock: a step another replica decided already is answered, not decided again.
        const slot = effects.step;
        const heldRow =
          slot === undefined
            ? undefined
            : (
                await unit.tx.query<HeldStepRow>(SELECT_STEP, [
                  record.grantId,
                  slot.runId,
                  slot.stepKey,
                ])
              ).rows[0];
        if (slot !== undefined && heldRow !== undefined) {
          const held = heldStep(heldRow);
          if (!replacesHeld(held, slot, record)) return { kind: "step_held", held };
        }
        // The run before anything is consumed or charged, under the chain lock: every writing unit
        // of every replica waits for it, so what is read here stays true until this commits.
        const run = runEffectOf(record, effects);
        if (run !== undefined) {
          const detail = await runChanged(unit.tx, run);
          if (detail !== undefined) return { kind: "run_changed", detail };
        }
        let outcome: CommitOutcome = { kind: "committed" };
        let written = row;
        if (record.decision === "allow" && (effects.approval || effects.budget)) {
          await unit.tx.query("SAVEPOINT effects");
          const refusal = await effectsOf(unit, record, effects);
          if (refusal === undefined) {
            await unit.tx.query("RELEASE SAVEPOINT effects");
          } else {
            await unit.tx.query("ROLLBACK TO SAVEPOINT effects");
            outcome = { kind: "refused", ...refusal };
            if (refusal.reasonCode === "APPROVAL_EXPIRED") await expireDue(unit, record.decidedAt);
            written = { ...row, decision: "deny", reason_code: refusal.reasonCode };
          }
        }
        if (run !== undefined && outcome.kind === "committed")
          await applyRunEffect(unit.tx, run, record);
        await unit.tx.query(
          INSERT,
          DECISION_COLUMNS.map((c) => written[c]),
        );
        if (effects.inputs !== undefined)
          await unit.tx.query(
            "INSERT INTO decision_inputs (decision_id, decided_at, inputs) VALUES ($1, $2, $3)",
            [record.decisionId, record.decidedAt, effects.inputs],
          );
        if (slot !== undefined) {
          const step = stepRow(record, slot, written);
          await unit.tx.query(
            PUT_STEP,
            STEP_COLUMNS.map((c) => step[c]),
          );
        }
        await unit.append(decisionAudit(decisionRecord(written)));
        return outcome;
      }),

    async getDecision(decisionId) {
      const row = (await pool.query<DecisionRow>(SELECT, [decisionId])).rows[0];
      return row === undefined ? undefined : decisionRecord(row);
    },

    async readReplayPage(afterSeq, toSeq, limit) {
      const { rows } = await pool.query<ReplayRowColumns>(
        `SELECT a.seq, ${REPLAY_COLUMNS.map((c) => `d.${c}`).join(", ")}, i.inputs
         FROM audit_log AS a
         JOIN decisions AS d ON d.decision_id = a.entry::jsonb ->> 'decisionId'
         LEFT JOIN decision_inputs AS i ON i.decision_id = d.decision_id
         WHERE a.seq > $1 AND a.seq <= $2 AND a.entry::jsonb ->> 'kind' = 'decision'
         ORDER BY a.seq LIMIT $3`,
        [afterSeq, toSeq, limit],
      );
      return rows.map(replayRow);
    },

    async pruneDecisionInputs(before) {
      const { rowCount } = await pool.query("DELETE FROM decision_inputs WHERE decided_at < $1", [
        before,
      ]);
      return rowCount ?? 0;
    },

    getBudgetUsage: (grantId) => budgetUsage(pool, grantId),

    async getStep(grantId, runId, stepKey) {
      const row = (await pool.query<HeldStepRow>(SELECT_STEP, [grantId, runId, stepKey])).rows[0];
      return row === undefined ? undefined : heldStep(row);
    },
  };
}
