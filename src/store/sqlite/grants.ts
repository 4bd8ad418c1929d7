import type { Database } from "better-sqlite3";
import type { TaskGrant } from "../../core/grant.js";
import { StoreError, type GrantStore, type StoredGrant } from "../port.js";
import type { GrantOrigin } from "../../core/replay.js";
import { grantFromJson, grantOriginFromJson, grantToJson } from "../grant-json.js";
import type { AuditAppend } from "./audit.js";
import type { GroupCommit } from "./group-commit.js";
import { sqliteRevocationCheck } from "./revocation-check.js";

interface GrantRow {
  readonly grant_json: string;
  readonly revoked_at: number | null;
  readonly revoked_reason: string | null;
}

/** The columns a grant is indexed by, beside its JSON. */
interface GrantParams {
  readonly id: string;
  readonly rootId: string;
  readonly parentId: string | null;
  readonly subject: string;
  readonly owner: string;
  readonly profile: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
  readonly json: string;
  readonly origin: string | null;
}

/** A grant and every grant delegated from it, however deep (UNION also ends a corrupt cycle). */
const SUBTREE = `
  WITH RECURSIVE subtree (id) AS (
    SELECT id FROM grants WHERE id = @id
    UNION
    SELECT g.id FROM grants AS g JOIN subtree AS s ON g.parent_id = s.id
  )`;

/**
 * The grant half of the SQLite store. Statements are prepared once, here; errors are left raw
 * for the caller (openSqliteStore) to translate. Writing transactions are IMMEDIATE: they take
 * the write lock (waiting up to the busy timeout) before they read, so a read-then-write never
 * fails half way with SQLITE_BUSY_SNAPSHOT when another process wrote in between.
 */
export function sqliteGrantStore(
  db: Database,
  group: GroupCommit,
  append: AuditAppend,
  pruneRuns: (before: number) => void,
): GrantStore {
  const insert = db.prepare<[GrantParams], never>(`
    INSERT INTO grants (id, root_id, parent_id, subject, owner, profile, issued_at, expires_at, grant_json, origin_json)
    VALUES (@id, @rootId, @parentId, @subject, @owner, @profile, @issuedAt, @expiresAt, @json, @origin)
    ON CONFLICT (id) DO NOTHING`);
  const jsonOf = db.prepare<[string], string>("SELECT grant_json FROM grants WHERE id = ?").pluck();
  const originOf = db.prepare<[string], { origin_json: string | null }>(
    "SELECT origin_json FROM grants WHERE id = ?",
  );
  const select = db.prepare<[string], GrantRow>(
    "SELECT grant_json, revoked_at, revoked_reason FROM grants WHERE id = ?",
  );
  const live = db.prepare<
    [{ after: string; now: number; limit: number }],
    { id: string; grant_json: string }
  >(
    `SELECT id, grant_json FROM grants WHERE id > @after AND revoked_at IS NULL AND expires_at > @now
    ORDER BY id LIMIT @limit`,
  );
  const revoke = db.prepare<[{ id: string; at: number; reason: string }], never>(`${SUBTREE}
    UPDATE grants SET revoked_at = @at, revoked_reason = @reason
    WHERE revoked_at IS NULL AND id IN subtree`);
  const unrevoked = db.prepare<[{ id: string }], { id: string; root_id: string; subject: string }>(
    `${SUBTREE}
    SELECT id, root_id, subject FROM grants WHERE revoked_at IS NULL AND id IN subtree ORDER BY id`,
  );
  const subtree = db
    .prepare<[{ id: string }], string>(
      `${SUBTREE}
    SELECT id FROM subtree ORDER BY id <> @id, id`,
    )
    .pluck();
  const anyRevoked = sqliteRevocationCheck(db);

  // Expired before @before, and no kept grant (expiring at or after @before) names it in its chain.
  const PRUNED = `
    expires_at < @before
      AND NOT EXISTS (
        SELECT 1 FROM grants AS kept, json_each(kept.grant_json, '$.chain') AS link
        WHERE kept.expires_at >= @before AND link.value = grants.id
      )`;
  const prune = db.prepare<[{ before: number }], never>(`DELETE FROM grants WHERE ${PRUNED}`);
  // A pruned grant's steps go with it: its token is refused before any step is looked up.
  const pruneSteps = db.prepare<[{ before: number }], never>(
    `DELETE FROM decision_steps WHERE grant_id IN (SELECT id FROM grants WHERE ${PRUNED})`,
  );

  const put = (grant: TaskGrant, caller: string | undefined, origin: GrantOrigin | undefined) => {
    const json = grantToJson(grant);
    const { changes } = insert.run(grantParams(grant, json, origin));
    if (changes === 1) {
      append({
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
    if (jsonOf.get(grant.id) === json) return;
    throw new StoreError("CONFLICT", `grant ${grant.id} exists already with other content`);
  };

  const revokeTree = (
    id: string,
    reason: string,
    at: number,
    caller: string | undefined,
  ): string[] => {
    const ids = subtree.all({ id });
    if (ids.length === 0) throw new StoreError("NOT_FOUND", `grant ${id} is not known`);
    const fresh = unrevoked.all({ id });
    revoke.run({ id, at, reason });
    for (const g of fresh)
      append({
        at,
        kind: "grant.revoked",
        grantId: g.id,
        rootId: g.root_id,
        subject: g.subject,
        ...(caller === undefined ? {} : { caller }),
      });
    return ids;
  };

  return {
    putGrant: (grant, caller, origin) => group.run(() => put(grant, caller, origin)),
    async getGrantOrigin(id) {
      return grantOriginFromJson(originOf.get(id)?.origin_json ?? null, id);
    },
    async getGrant(id) {
      const row = select.get(id);
      return row === undefined ? undefined : storedGrant(row, id);
    },
    revokeGrant: (id, reason, at, caller) => group.run(() => revokeTree(id, reason, at, caller)),
    anyRevoked: async (ids) => ids.length > 0 && (await anyRevoked(ids)),
    async listLiveGrants(afterId, now, limit) {
      return live.all({ after: afterId, now, limit }).map((r) => grantFromJson(r.grant_json, r.id));
    },
    // A unit of the group commit, so it is ordered with the writes queued before it.
    pruneGrants: (before) =>
      group.run(() => {
        pruneSteps.run({ before });
        // Run rows and window charges carry their own expiry (the grant's; a charge's window end).
        pruneRuns(before);
        return prune.run({ before }).changes;
      }),
  };
}

function grantParams(g: TaskGrant, json: string, origin: GrantOrigin | undefined): GrantParams {
  return {
    id: g.id,
    rootId: g.rootId,
    parentId: g.parentId,
    subject: g.subject,
    owner: g.owner,
    profile: g.profile,
    issuedAt: g.issuedAt,
    expiresAt: g.expiresAt,
    json,
    origin: origin === undefined ? null : JSON.stringify(origin),
  };
}

function storedGrant(row: GrantRow, id: string): StoredGrant {
  const grant = grantFromJson(row.grant_json, id);
  if (row.revoked_at === null) return { grant };
  if (typeof row.revoked_at !== "number")
    throw new StoreError("CORRUPT", `grant ${id}: revoked_at is not a time`);
  return row.revoked_reason === null
    ? { grant, revokedAt: row.revoked_at }
    : { grant, revokedAt: row.revoked_at, revokedReason: row.revoked_reason };
}
