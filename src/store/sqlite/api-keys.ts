import type { Database } from "better-sqlite3";
import { API_KEY_COLUMNS, apiKeyRow, storedApiKey, type ApiKeyRow } from "../api-key-row.js";
import { StoreError, type ApiKeyStore, type StoreMetaStore } from "../port.js";

/**
 * The API-key half of the SQLite store: callers' keys, stored only as hashes. Statements are
 * prepared once, here; errors are left raw for openSqliteStore to translate.
 */
export function sqliteApiKeyStore(db: Database): ApiKeyStore & StoreMetaStore {
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
  const readMeta = db.prepare<[string], { value: string }>(
    "SELECT value FROM store_meta WHERE name = ?",
  );
  const writeMeta = db.prepare<[string, string], never>(
    "INSERT INTO store_meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
  );
  const claimMeta = db.prepare<[string, string], never>(
    "INSERT INTO store_meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
  );
  // The first key ever created ends protected mode, in the same transaction as the key.
  const endProtectedMode = db.prepare<[string], never>(
    "INSERT INTO store_meta (name, value) VALUES ('protected_mode_ended', ?) ON CONFLICT DO NOTHING",
  );
  const create = db.transaction((row: ApiKeyRow): number => {
    const { changes } = insert.run(row);
    if (changes > 0) endProtectedMode.run(String(row.created_at));
    return changes;
  });

  return {
    async createApiKey(key) {
      const changes = create.immediate(apiKeyRow(key));
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
    async protectedModeEnded() {
      return readMeta.get("protected_mode_ended") !== undefined;
    },
    async readMeta(name) {
      return readMeta.get(name)?.value;
    },
    async writeMeta(name, value) {
      writeMeta.run(name, value);
    },
    async claimMeta(name, value) {
      claimMeta.run(name, value);
      return (readMeta.get(name) as { value: string }).value;
    },
  };
}
