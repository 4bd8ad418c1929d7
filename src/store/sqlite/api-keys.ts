import type { Database } from "better-sqlite3";
import { StoreError, type ApiKeyStore, type StoredApiKey } from "../port.js";

interface ApiKeyRow {
  readonly id: string;
  readonly principal: string;
  readonly roles_json: string;
  readonly secret_hash: string;
  readonly created_at: number;
  readonly revoked_at: number | null;
}

const COLUMNS = "id, principal, roles_json, secret_hash, created_at, revoked_at";

/**
 * The API-key half of the SQLite store: callers' keys, stored only as hashes. Statements are
 * prepared once, here; errors are left raw for openSqliteStore to translate.
 */
export function sqliteApiKeyStore(db: Database): ApiKeyStore {
  const insert = db.prepare<[ApiKeyRow], never>(`
    INSERT INTO api_keys (${COLUMNS}) VALUES (@id, @principal, @roles_json, @secret_hash, @created_at, @revoked_at)
    ON CONFLICT DO NOTHING`);
  const list = db.prepare<[], ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, rowid`);
  const byHash = db.prepare<[string], ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE secret_hash = ?`);
  // A revocation never moves later: revoking twice keeps the earlier time.
  const revoke = db.prepare<[{ id: string; at: number }], never>("UPDATE api_keys SET revoked_at = min(coalesce(revoked_at, @at), @at) WHERE id = @id");
  const active = db.prepare<[], { n: number }>("SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL) AS n");

  return {
    async createApiKey(key) {
      const { changes } = insert.run(apiKeyRow(key));
      if (changes === 0) throw new StoreError("CONFLICT", `api key ${key.id} exists already`);
    },
    async listApiKeys() {
      return list.all().map(storedApiKey);
    },
    async revokeApiKey(id, at) {
      const { changes } = revoke.run({ id, at });
      if (changes === 0) throw new StoreError("NOT_FOUND", `api key ${id} is not known`);
    },
    async findApiKeyByHash(secretHash) {
      const row = byHash.get(secretHash);
      return row === undefined ? undefined : storedApiKey(row);
    },
    async hasActiveApiKey() {
      return (active.get()?.n ?? 0) === 1;
    },
  };
}

function apiKeyRow(key: StoredApiKey): ApiKeyRow {
  return {
    id: key.id,
    principal: key.principal,
    roles_json: JSON.stringify(key.roles),
    secret_hash: key.secretHash,
    created_at: key.createdAt,
    revoked_at: key.revokedAt ?? null,
  };
}

function storedApiKey(row: ApiKeyRow): StoredApiKey {
  let roles: unknown;
  try {
    roles = JSON.parse(row.roles_json);
  } catch {
    roles = undefined;
  }
  if (!Array.isArray(roles) || !roles.every((r) => typeof r === "string")) throw new StoreError("CORRUPT", `api key ${row.id}: unreadable roles`);
  const key: StoredApiKey = { id: row.id, principal: row.principal, roles: roles, secretHash: row.secret_hash, createdAt: row.created_at };
  return row.revoked_at === null ? key : { ...key, revokedAt: row.revoked_at };
}
