import { StoreError, type StoredApiKey } from "./port.js";

/** An API key as both adapters keep it: its roles as JSON text, times as Unix seconds. */
export interface ApiKeyRow {
  readonly id: string;
  readonly principal: string;
  readonly roles_json: string;
  readonly secret_hash: string;
  readonly created_at: number;
  readonly revoked_at: number | null;
}

/** The columns of an API-key row, in the order both adapters select them. */
export const API_KEY_COLUMNS = "id, principal, roles_json, secret_hash, created_at, revoked_at";

export function apiKeyRow(key: StoredApiKey): ApiKeyRow {
  return {
    id: key.id,
    principal: key.principal,
    roles_json: JSON.stringify(key.roles),
    secret_hash: key.secretHash,
    created_at: key.createdAt,
    revoked_at: key.revokedAt ?? null,
  };
}

/** Reads a row back; roles that are not a list of strings are CORRUPT. */
export function storedApiKey(row: ApiKeyRow): StoredApiKey {
  let roles: unknown;
  try {
    roles = JSON.parse(row.roles_json);
  } catch {
    roles = undefined;
  }
  if (!Array.isArray(roles) || !roles.every((r) => typeof r === "string"))
    throw new StoreError("CORRUPT", `api key ${row.id}: unreadable roles`);
  const key: StoredApiKey = {
    id: row.id,
    principal: row.principal,
    roles,
    secretHash: row.secret_hash,
    createdAt: row.created_at,
  };
  return row.revoked_at === null ? key : { ...key, revokedAt: row.revoked_at };
}
