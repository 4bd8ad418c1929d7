import type { TaskGrant } from "../../core/grant.js";
import { grantFromJson, grantOriginFromJson, grantToJson } from "../grant-json.js";
import { StoreError, type GrantStore, type StoredGrant } from "../port.js";
import { inChainUnit, type Chain } from "./chain.js";

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
 * putGrant and revokeGrant are units of work under the chain lock (`inChainUnit`): the grant row
 * (or the revocation of the subtree) and its audit records commit together. A grant row's content
 * never changes, so a put again compares with the row that won.
 */
export function postgresGrantStore(chain: Chain): GrantStore {
  const { pool } = chain;
  return {
    putGrant: (grant, caller, origin) =>
      inChainUnit(chain, async (unit) => {
        const json = grantToJson(grant);
        const inserted = await unit.tx.query(
          `INSERT INTO grants (id, root_id, parent_id, subject, owner, profile, issued_at, expires_at, grant_json, origin_json)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
          [...grantParams(grant, json), origin === undefined ? null : JSON.stringify(origin)],
        );
        if (inserted.rowCount === 1) {
          await unit.append({
            at: grant.issuedAt,
            kind: grant.parentId === null ? "grant.issued" : "grant.delegated",
            grantId: grant.id,
            rootId: grant.rootId,
            subject: grant.subject,
            catalogVersion: grant.catalogVersion,
            ...(caller === undefined ? {} : { caller }),
          });
          return;
        }
        const stored = await unit.tx.query<{ grant_json: string }>(
          "SELECT grant_json FROM grants WHERE id = $1",
          [grant.id],
        );
        if (stored.rows[0]?.grant_json === json) return;
        throw new StoreError("CONFLICT", `grant ${grant.id} exists already with other content`);
      }),

    async listLiveGrants(afterId, now, limit) {
      const { rows } = await pool.query<{ id: string; grant_json: string }>(
        `SELECT id, grant_json FROM grants WHERE id > $1 AND revoked_at IS NULL AND expires_at > $2
        ORDER BY id LIMIT $3`,
        [afterId, now, limit],
      );
      return rows.map((r) => grantFromJson(r.grant_json, r.id));
    },

    async getGrantOrigin(id) {
      const { rows } = await pool.query<{ origin_json: string | null }>(
        "SELECT origin_json FROM grants WHERE id = $1",
        [id],
      );
      return grantOriginFromJson(rows[0]?.origin_json ?? null, id);
    },

    async getGrant(id) {
      const { rows } = await pool.query<GrantRow>(
        "SELECT grant_json, revoked_at, revoked_reason FROM grants WHERE id = $1",
        [id],
      );
      const row = rows[0];
      return row === undefined ? undefined : storedGrant(row, id);
    },

    async pruneGrants(before) {
      // A grant still valid at `before` keeps every ancestor its chain names, with its revocation.
      // A pruned grant's steps go with it (one statement): its token is refused before any step is looked up.
      // Run rows and window charges carry their own expiry (the grant's; a charge's window end).
      const { rows } = await pool.query<{ pruned: string }>(
        `WITH gone AS (
           DELETE FROM grants
           WHERE expires_at < $1
             AND NOT EXISTS (SELECT 1 FROM grants AS kept WHERE kept.expires_at >= $1 AND (kept.grant_json::jsonb -> 'chain') ? grants.id)
           RETURNING id
         ), steps AS (DELETE FROM decision_steps WHERE grant_id IN (SELECT id FROM gone)),
         labels AS (DELETE FROM run_labels WHERE expires_at < $1),
         last AS (
           DELETE FROM run_last AS l USING run_calls AS c
           WHERE c.grant_id = l.grant_id AND c.run_id = l.run_id AND c.expires_at < $1
         ),
         calls AS (DELETE FROM run_calls WHERE expires_at < $1),
         charges AS (DELETE FROM window_charges WHERE expires_at < $1)
         SELECT count(*) AS pruned FROM gone`,
        [before],
      );
      return Number(rows[0]?.pruned ?? 0);
    },

    revokeGrant: (id, reason, at, caller) =>
      inChainUnit(chain, async (unit) => {
        const tx = unit.tx;
        const subtree = await tx.query<{ id: string }>(
          `${SUBTREE} SELECT id FROM subtree ORDER BY id <> $1, id COLLATE "C"`,
          [id],
        );
        const ids = subtree.rows.map((r) => r.id);
        if (ids.length === 0) throw new StoreError("NOT_FOUND", `grant ${id} is not known`);
        const fresh = await tx.query<{ id: string; root_id: string; subject: string }>(
          `UPDATE grants SET revoked_at = $2, revoked_reason = $3 WHERE revoked_at IS NULL AND id = ANY($1::text[]) RETURNING id, root_id, subject`,
          [ids, at, reason],
        );
        const revoked = [...fresh.rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        for (const g of revoked)
          await unit.append({
            at,
            kind: "grant.revoked",
            grantId: g.id,
            rootId: g.root_id,
            subject: g.subject,
            ...(caller === undefined ? {} : { caller }),
          });
        return ids;
      }),

    async anyRevoked(ids) {
      if (ids.length === 0) return false;
      const { rows } = await pool.query<{ revoked: boolean }>(
        "SELECT EXISTS (SELECT 1 FROM grants WHERE id = ANY($1::text[]) AND revoked_at IS NOT NULL) AS revoked",
        [ids],
      );
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
  if (!Number.isSafeInteger(row.revoked_at))
    throw new StoreError("CORRUPT", `grant ${id}: revoked_at is not a time`);
  return row.revoked_reason === null
    ? { grant, revokedAt: row.revoked_at }
    : { grant, revokedAt: row.revoked_at, revokedReason: row.revoked_reason };
}
