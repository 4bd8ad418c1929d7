import type { Database } from "better-sqlite3";
import { API_KEY_COLUMNS, apiKeyRow, storedApiKey, type ApiKeyRow } from "../api-key-row.js";
import { StoreError, type ApiKeyStore } from "../port.js";

/**
 * The API-key half of the SQLite store: callers' keys, stored only as hashes. Statements are
 * prepared once, here; errors are left raw for openSqliteStore to translate.
 */
export function sqliteApiKeyStore(db: Database): ApiKeyStore {
  const insert = db.prepare<[ApiKeyRow], never>(`
    INSERT INTO api_keys (${API_KEY_COLUMNS}) VALUES (@id, @principal, @roles_json, @secret_hash, @created_at, @revoked_at)
    ON CONFLICT DO NOTHING`);
  const list = db.prepare<[], ApiKeyRow>(
    `SELECT ${API_KEY_COLUMNS} FROM api_keys ORDER BY created_at, rowid`,
  );
  const byHash = db.prepare<[string], ApiKeyRow>(
    `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE secret_hash = ?`,
  );
  // A revocation never moves later: revoking twice keeps the earlier time.
  const revoke = db.prepare<[{ id: string; at: number }], never>(
    "UPDATE api_keys SET revoked_at = min(coalesce(revoked_at, @at), @at) WHERE id = @id",
  );
  const active = db.prepare<[], { n: number }>(
    "SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL) AS n",
  );

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
