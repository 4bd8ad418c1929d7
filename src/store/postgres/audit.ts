import type { AuditRow } from "../../core/audit-chain.js";
import type { AuditCheckpoint, AuditStore } from "../port.js";
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
