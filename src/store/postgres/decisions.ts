import type pg from "pg";
import { DECISION_COLUMNS, decisionRecord, decisionRow, sameDecisionRow, type DecisionRow } from "../decision-row.js";
import { StoreError, type DecisionStore } from "../port.js";
import { inTransaction } from "./transaction.js";

const INSERT = `
  INSERT INTO decisions (${DECISION_COLUMNS.join(", ")})
  VALUES (${DECISION_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})
  ON CONFLICT (decision_id) DO NOTHING`;
const SELECT = `SELECT ${DECISION_COLUMNS.join(", ")} FROM decisions WHERE decision_id = $1`;

/**
 * The decision part of the PostgreSQL store; errors are left raw for openPostgresStore to
 * translate. The commit is one SERIALIZABLE transaction, retried on a serialization failure —
 * safe because it is idempotent by decision id — so budget and approval consumption can join it
 * without weakening its atomicity.
 */
export function postgresDecisionStore(pool: pg.Pool): DecisionStore {
  return {
    async commitDecision(record) {
      const row = decisionRow(record);
      await inTransaction(
        pool,
        async (tx) => {
          const inserted = await tx.query(
            INSERT,
            DECISION_COLUMNS.map((c) => row[c]),
          );
          if (inserted.rowCount === 1) return;
          const stored = (await tx.query<DecisionRow>(SELECT, [row.decision_id])).rows[0];
          if (stored !== undefined && sameDecisionRow(stored, row)) return;
          throw new StoreError("CONFLICT", `decision ${row.decision_id} is recorded already with other content`);
        },
        { isolation: "serializable" },
      );
    },

    async getDecision(decisionId) {
      const row = (await pool.query<DecisionRow>(SELECT, [decisionId])).rows[0];
      return row === undefined ? undefined : decisionRecord(row);
    },
  };
}
