import type pg from "pg";
import { API_KEY_COLUMNS, apiKeyRow, storedApiKey, type ApiKeyRow } from "../api-key-row.js";
import { StoreError, type ApiKeyStore } from "../port.js";

/**
 * The API-key part of the PostgreSQL store: callers' keys, stored only as hashes. Errors are left
 * raw for openPostgresStore to translate. Keys list by creation time, then insertion order.
 */
export function postgresApiKeyStore(pool: pg.Pool): ApiKeyStore {
  return {
    async createApiKey(key) {
      const row = apiKeyRow(key);
      const { rowCount } = await pool.query(
        `INSERT INTO api_keys (${API_KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
        [row.id, row.principal, row.roles_json, row.secret_hash, row.created_at, row.revoked_at],
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
  };
}
