import type { Database } from "better-sqlite3";
import {
  APPROVAL_LINK_COLUMNS,
  approvalLinkOf,
  type ApprovalLinkRow,
} from "../approval-link-row.js";
import { StoreError, type ApprovalLinkStore } from "../port.js";

/**
 * The approval-link part of the SQLite store: hashes only. Redeeming is one conditional UPDATE
 * (unused and unexpired), so of two redemptions only one changes the row. Errors are left raw
 * for openSqliteStore to translate.
 */
export function sqliteApprovalLinks(db: Database): ApprovalLinkStore {
  const insert = db.prepare<[ApprovalLinkRow], never>(`
    INSERT INTO approval_links (${APPROVAL_LINK_COLUMNS})
    VALUES (@token_hash, @approval_id, @approver, @created_at, @expires_at, @used_at)
    ON CONFLICT DO NOTHING`);
  const byHash = db.prepare<[string], ApprovalLinkRow>(
    `SELECT ${APPROVAL_LINK_COLUMNS} FROM approval_links WHERE token_hash = ?`,
  );
  const claim = db.prepare<[{ hash: string; at: number }], ApprovalLinkRow>(`
    UPDATE approval_links SET used_at = @at
    WHERE token_hash = @hash AND used_at IS NULL AND expires_at > @at
    RETURNING ${APPROVAL_LINK_COLUMNS}`);
  const runOf = db.prepare<[string], { run_id: string | null }>(
    "SELECT run_id FROM decisions WHERE approval_id = ? AND decision = 'require_approval' ORDER BY decided_at, rowid LIMIT 1",
  );
  const prune = db.prepare<[number], never>("DELETE FROM approval_links WHERE expires_at < ?");
  return {
    async pruneApprovalLinks(before) {
      return prune.run(before).changes;
    },
    async approvalRun(approvalId) {
      return runOf.get(approvalId)?.run_id ?? undefined;
    },
    async createApprovalLink(link) {
      const { changes } = insert.run({
        token_hash: link.tokenHash,
        approval_id: link.approvalId,
        approver: link.approver,
        created_at: link.createdAt,
        expires_at: link.expiresAt,
        used_at: link.usedAt ?? null,
      });
      if (changes === 0) throw new StoreError("CONFLICT", "an approval link with this hash exists");
    },
    async getApprovalLink(tokenHash) {
      const row = byHash.get(tokenHash);
      return row === undefined ? undefined : approvalLinkOf(row);
    },
    async redeemApprovalLink(tokenHash, at) {
      const claimed = claim.get({ hash: tokenHash, at });
      if (claimed !== undefined) return { ok: true, link: approvalLinkOf(claimed) };
      const row = byHash.get(tokenHash);
      if (row === undefined) return { ok: false, problem: "unknown" };
      const link = approvalLinkOf(row);
      return { ok: false, problem: link.usedAt === undefined ? "expired" : "used", link };
    },
  };
}
