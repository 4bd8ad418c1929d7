import type pg from "pg";
import {
  APPROVAL_LINK_COLUMNS,
  approvalLinkOf,
  type ApprovalLinkRow,
} from "../approval-link-row.js";
import { StoreError, type ApprovalLinkStore } from "../port.js";

/**
 * The approval-link part of the PostgreSQL store: hashes only. Redeeming is one conditional
 * UPDATE (unused and unexpired): under concurrency, across replicas, one redemption changes the
 * row and the other sees it used. Errors are left raw for openPostgresStore to translate.
 */
export function postgresApprovalLinks(pool: pg.Pool): ApprovalLinkStore {
  const read = async (tokenHash: string) =>
    (
      await pool.query<ApprovalLinkRow>(
        `SELECT ${APPROVAL_LINK_COLUMNS} FROM approval_links WHERE token_hash = $1`,
        [tokenHash],
      )
    ).rows[0];
  return {
    async pruneApprovalLinks(before) {
      const { rowCount } = await pool.query("DELETE FROM approval_links WHERE expires_at < $1", [
        before,
      ]);
      return rowCount ?? 0;
    },
    async approvalRun(approvalId) {
      const { rows } = await pool.query<{ run_id: string | null }>(
        "SELECT run_id FROM decisions WHERE approval_id = $1 AND decision = 'require_approval' ORDER BY decided_at, decision_id LIMIT 1",
        [approvalId],
      );
      return rows[0]?.run_id ?? undefined;
    },
    async createApprovalLink(link) {
      const { rowCount } = await pool.query(
        `INSERT INTO approval_links (${APPROVAL_LINK_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
        [
          link.tokenHash,
          link.approvalId,
          link.approver,
          link.createdAt,
          link.expiresAt,
          link.usedAt ?? null,
        ],
      );
      if (rowCount === 0)
        throw new StoreError("CONFLICT", "an approval link with this hash exists");
    },
    async getApprovalLink(tokenHash) {
      const row = await read(tokenHash);
      return row === undefined ? undefined : approvalLinkOf(row);
    },
    async redeemApprovalLink(tokenHash, at) {
      const { rows } = await pool.query<ApprovalLinkRow>(
        `UPDATE approval_links SET used_at = $2
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
         RETURNING ${APPROVAL_LINK_COLUMNS}`,
        [tokenHash, at],
      );
      if (rows[0] !== undefined) return { ok: true, link: approvalLinkOf(rows[0]) };
      const row = await read(tokenHash);
      if (row === undefined) return { ok: false, problem: "unknown" };
      const link = approvalLinkOf(row);
      return { ok: false, problem: link.usedAt === undefined ? "expired" : "used", link };
    },
  };
}
