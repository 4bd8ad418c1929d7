import type { AuditRow } from "../../core/audit-chain.js";
import { StoreError, type AuditCheckpoint, type AuditStore } from "../port.js";
import { inChainUnit, type Chain } from "./chain.js";

/**
 * The audit part of the PostgreSQL store: reads of the one chain and its signed checkpoints
 * (records are appended by the units of work, `inChainUnit`; `appendAudit` is one on its own). Reads need no lock: records commit
 * in seq order, so a reader never sees a gap that a later commit fills.
 */
export function postgresAuditStore(chain: Chain): AuditStore {
  const { pool } = chain;
  return {
    async readAudit(afterSeq, limit) {
      return (
        await pool.query<AuditRow>(
          "SELECT seq, entry, hash FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2",
          [afterSeq, limit],
        )
      ).rows;
    },
    async auditHead() {
      return (
        await pool.query<{ seq: number; hash: string }>(
          "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1",
        )
      ).rows[0];
    },
    async putCheckpoint(cp) {
      await pool.query(
        "INSERT INTO audit_checkpoints (seq, hash, at, signature) VALUES ($1, $2, $3, $4) ON CONFLICT (seq) DO NOTHING",
        [cp.seq, cp.hash, cp.at, cp.signature],
      );
    },
    // Under the chain lock: no unit of work appends or checkpoints in between.
    pruneAudit: (anchorSeq) =>
      inChainUnit(chain, async ({ tx }) => {
        const anchored = await tx.query(
          "SELECT 1 FROM audit_checkpoints c JOIN audit_log l ON l.seq = c.seq AND l.hash = c.hash WHERE c.seq = $1",
          [anchorSeq],
        );
        if (anchored.rowCount === 0)
          throw new StoreError(
            "NOT_FOUND",
            `no checkpoint of record ${anchorSeq} with that record's hash to anchor the kept log`,
          );
        const records = await tx.query("DELETE FROM audit_log WHERE seq < $1", [anchorSeq]);
        const checkpoints = await tx.query("DELETE FROM audit_checkpoints WHERE seq < $1", [
          anchorSeq,
        ]);
        return { records: records.rowCount ?? 0, checkpoints: checkpoints.rowCount ?? 0 };
      }),
    appendAudit: (draft) => inChainUnit(chain, (unit) => unit.append(draft)),
    async listCheckpoints() {
      return (
        await pool.query<AuditCheckpoint>(
          "SELECT seq, hash, at, signature FROM audit_checkpoints ORDER BY seq",
        )
      ).rows;
    },
  };
}
