import type pg from "pg";
import { API_KEY_COLUMNS, apiKeyRow, storedApiKey, type ApiKeyRow } from "../api-key-row.js";
import { StoreError, type ApiKeyStore, type StoreMetaStore } from "../port.js";
import { inTransaction } from "./transaction.js";

/**
 * The API-key part of the PostgreSQL store: callers' keys, stored only as hashes. Errors are left
 * raw for openPostgresStore to translate. Keys list by creation time, then insertion order.
 */
export function postgresApiKeyStore(pool: pg.Pool): ApiKeyStore & StoreMetaStore {
  return {
    async createApiKey(key) {
      const row = apiKeyRow(key);
      // The first key ever created ends protected mode, in the same transaction as the key.
      const rowCount = await inTransaction(
        pool,
        async (tx) => {
          const inserted = await tx.query(
            `INSERT INTO api_keys (${API_KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
            [
              row.id,
              row.principal,
              row.roles_json,
              row.secret_hash,
              row.created_at,
              row.revoked_at,
            ],
          );
          if (inserted.rowCount !== 0)
            await tx.query(
              "INSERT INTO store_meta (name, value) VALUES ('protected_mode_ended', $1) ON CONFLICT DO NOTHING",
              [String(row.created_at)],
            );
          return inserted.rowCount;
        },
        { isolation: "read committed" },
      );
      if (rowCount === 0) throw new StoreError("CONFLICT", `api key ${key.id} exists already`);
    },
    async listApiKeys() {
      const { rows } = await pool.query<ApiKeyRow>(
        `SELECT ${API_KEY_COLUMNS} FROM api_keys ORDER BY created_at, seq`,
      );
      return rows.map(storedApiKey);
    },
    async revokeApiKey(id, at) {
      // A revocation never moves later: revoking twice keeps the earlier time.
      const { rowCount } = await pool.query(
        "UPDATE api_keys SET revoked_at = LEAST(COALESCE(revoked_at, $2), $2) WHERE id = $1",
        [id, at],
      );
      if (rowCount === 0) throw new StoreError("NOT_FOUND", `api key ${id} is not known`);
    },
    async findApiKeyByHash(secretHash) {
      const { rows } = await pool.query<ApiKeyRow>(
        `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE secret_hash = $1`,
        [secretHash],
      );
      return rows[0] === undefined ? undefined : storedApiKey(rows[0]);
    },
    async hasActiveApiKey() {
      const { rows } = await pool.query<{ found: boolean }>(
        "SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL) AS found",
      );
      return rows[0]?.found === true;
    },
    async protectedModeEnded() {
      const { rows } = await pool.query<{ found: boolean }>(
        "SELECT EXISTS (SELECT 1 FROM store_meta WHERE name = 'protected_mode_ended') AS found",
      );
      return rows[0]?.found === true;
    },
    async readMeta(name) {
      const { rows } = await pool.query<{ value: string }>(
        "SELECT value FROM store_meta WHERE name = $1",
        [name],
      );
      return rows[0]?.value;
    },
    async writeMeta(name, value) {
      await pool.query(
        "INSERT INTO store_meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
        [name, value],
      );
    },
    async claimMeta(name, value) {
      // Two statements: the read after the insert sees whichever claim committed first (a
      // concurrent insert is waited for by ON CONFLICT), where one statement's snapshot might not.
      await pool.query(
        "INSERT INTO store_meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        [name, value],
      );
      const { rows } = await pool.query<{ value: string }>(
        "SELECT value FROM store_meta WHERE name = $1",
        [name],
      );
      const claimed = rows[0];
      if (claimed === undefined) throw new StoreError("CORRUPT", `store meta ${name} vanished`);
      return claimed.value;
    },
  };
}
