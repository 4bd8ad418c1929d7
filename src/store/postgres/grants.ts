import type pg from "pg";
import type { TaskGrant } from "../../core/grant.js";
import { grantFromJson, grantToJson } from "../grant-json.js";
import { StoreError, type GrantStore, type StoredGrant } from "../port.js";
import { inTransaction } from "./transaction.js";

interface GrantRow {
  readonly grant_json: string;
  readonly revoked_at: number | null;
  readonly revoked_reason: string | null;
}

/** A grant and every grant delegated from it, however deep (UNION also ends a corrupt cycle). */
const SUBTREE = `
  WITH RECURSIVE subtree (id) AS (
    SELECT id FROM grants WHERE id = $1
    UNION
    SELECT g.id FROM grants AS g JOIN subtree AS s ON g.parent_id = s.id
  )`;

/**
 * The grant part of the PostgreSQL store; errors are left raw for openPostgresStore to translate.
 * putGrant needs no transaction: a grant row's content never changes, so "insert, or else compare
 * with the row that won" is atomic enough. A revocation reads the subtree and updates it in one
 * SERIALIZABLE transaction (retried on a serialization failure), the unit of work that issue 8's
 * "revoking a grant cancels its pending approvals" joins.
 */
export function postgresGrantStore(pool: pg.Pool): GrantStore {
  return {
    async putGrant(grant) {
      const json = grantToJson(grant);
      const inserted = await pool.query(
        `INSERT INTO grants (id, root_id, parent_id, subject, owner, profile, issued_at, expires_at, grant_json)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING`,
        grantParams(grant, json),
      );
      if (inserted.rowCount === 1) return;
      const stored = await pool.query<{ grant_json: string }>("SELECT grant_json FROM grants WHERE id = $1", [grant.id]);
      if (stored.rows[0]?.grant_json === json) return;
      throw new StoreError("CONFLICT", `grant ${grant.id} exists already with other content`);
    },

    async getGrant(id) {
      const { rows } = await pool.query<GrantRow>("SELECT grant_json, revoked_at, revoked_reason FROM grants WHERE id = $1", [id]);
      const row = rows[0];
      return row === undefined ? undefined : storedGrant(row, id);
    },

    async pruneGrants(before) {
      // A grant still valid at `before` keeps every ancestor its chain names, with its revocation.
      const { rowCount } = await pool.query(
        `DELETE FROM grants
         WHERE expires_at < $1
           AND NOT EXISTS (SELECT 1 FROM grants AS kept WHERE kept.expires_at >= $1 AND (kept.grant_json::jsonb -> 'chain') ? grants.id)`,
        [before],
      );
      return rowCount ?? 0;
    },

    async revokeGrant(id, reason, at) {
      return inTransaction(
        pool,
        async (tx) => {
          const subtree = await tx.query<{ id: string }>(`${SUBTREE} SELECT id FROM subtree ORDER BY id <> $1, id COLLATE "C"`, [id]);
          const ids = subtree.rows.map((r) => r.id);
          if (ids.length === 0) throw new StoreError("NOT_FOUND", `grant ${id} is not known`);
          await tx.query("UPDATE grants SET revoked_at = $2, revoked_reason = $3 WHERE revoked_at IS NULL AND id = ANY($1::text[])", [ids, at, reason]);
          return ids;
        },
        { isolation: "serializable" },
      );
    },

    async anyRevoked(ids) {
      if (ids.length === 0) return false;
      const { rows } = await pool.query<{ revoked: boolean }>("SELECT EXISTS (SELECT 1 FROM grants WHERE id = ANY($1::text[]) AND revoked_at IS NOT NULL) AS revoked", [
        ids,
      ]);
      return rows[0]?.revoked === true;
    },
  };
}

function grantParams(g: TaskGrant, json: string): unknown[] {
  return [g.id, g.rootId, g.parentId, g.subject, g.owner, g.profile, g.issuedAt, g.expiresAt, json];
}

function storedGrant(row: GrantRow, id: string): StoredGrant {
  const grant = grantFromJson(row.grant_json, id);
  if (row.revoked_at === null) return { grant };
  if (!Number.isSafeInteger(row.revoked_at)) throw new StoreError("CORRUPT", `grant ${id}: revoked_at is not a time`);
  return row.revoked_reason === null ? { grant, revokedAt: row.revoked_at } : { grant, revokedAt: row.revoked_at, revokedReason: row.revoked_reason };
}
