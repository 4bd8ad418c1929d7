import type pg from "pg";
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
 * The API-key part of the PostgreSQL store: callers' keys, stored only as hashes. Errors are left
 * raw for openPostgresStore to translate. Keys list by creation time, then insertion order.
 */
export function postgresApiKeyStore(pool: pg.Pool): ApiKeyStore {
  return {
    async createApiKey(key) {
      const { rowCount } = await pool.query(`INSERT INTO api_keys (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, [
        key.id,
        key.principal,
        JSON.stringify(key.roles),
        key.secretHash,
        key.createdAt,
        key.revokedAt ?? null,
      ]);
      if (rowCount === 0) throw new StoreError("CONFLICT", `api key ${key.id} exists already`);
    },
    async listApiKeys() {
      const { rows } = await pool.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, seq`);
      return rows.map(storedApiKey);
    },
    async revokeApiKey(id, at) {
      // A revocation never moves later: revoking twice keeps the earlier time.
      const { rowCount } = await pool.query("UPDATE api_keys SET revoked_at = LEAST(COALESCE(revoked_at, $2), $2) WHERE id = $1", [id, at]);
      if (rowCount === 0) throw new StoreError("NOT_FOUND", `api key ${id} is not known`);
    },
    async findApiKeyByHash(secretHash) {
      const { rows } = await pool.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE secret_hash = $1`, [secretHash]);
      return rows[0] === undefined ? undefined : storedApiKey(rows[0]);
    },
    async hasActiveApiKey() {
      const { rows } = await pool.query<{ found: boolean }>("SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL) AS found");
      return rows[0]?.found === true;
    },
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
  const key: StoredApiKey = { id: row.id, principal: row.principal, roles, secretHash: row.secret_hash, createdAt: row.created_at };
  return row.revoked_at === null ? key : { ...key, revokedAt: row.revoked_at };
}
