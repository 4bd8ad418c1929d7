import type pg from "pg";
import { StoreError, type KeyStore, type StoredKey } from "../port.js";
import { inTransaction } from "./transaction.js";

interface KeyRow {
  readonly kid: string;
  readonly alg: string;
  readonly public_jwk: string;
  readonly private_jwk: string;
  readonly created_at: number;
  readonly retired_at: number | null;
}

const INSERT = `
  INSERT INTO keys (kid, alg, public_jwk, private_jwk, created_at, retired_at)
  VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (kid) DO NOTHING`;

/**
 * The signing-key part of the PostgreSQL store; errors are left raw for openPostgresStore to
 * translate. Keys list by createdAt, then `seq` (insertion order), the same order on every
 * replica. The first key is stored under an explicit table lock (SHARE ROW EXCLUSIVE conflicts
 * with itself and with every write, not with reads), so "no active key, so insert" is one step.
 */
export function postgresKeyStore(pool: pg.Pool): KeyStore {
  return {
    async listKeys() {
      const { rows } = await pool.query<KeyRow>(
        "SELECT kid, alg, public_jwk, private_jwk, created_at, retired_at FROM keys ORDER BY created_at, seq",
      );
      return rows.map(storedKey);
    },

    async insertKey(key) {
      const { rowCount } = await pool.query(INSERT, keyParams(key));
      if (rowCount === 0) throw new StoreError("CONFLICT", `key ${key.kid} exists already`);
    },

    async insertKeyUnlessActive(key) {
      return inTransaction(
        pool,
        async (tx) => {
          await tx.query("LOCK TABLE keys IN SHARE ROW EXCLUSIVE MODE");
          const active = await tx.query<{ found: boolean }>(
            "SELECT EXISTS (SELECT 1 FROM keys WHERE retired_at IS NULL) AS found",
          );
          if (active.rows[0]?.found === true) return false;
          const { rowCount } = await tx.query(INSERT, keyParams(key));
          if (rowCount === 0) throw new StoreError("CONFLICT", `key ${key.kid} exists already`);
          return true;
        },
        { isolation: "read committed" },
      );
    },

    async rewrapKey(kid, expected, next) {
      const { rowCount } = await pool.query(
        "UPDATE keys SET private_jwk = $3 WHERE kid = $1 AND private_jwk = $2",
        [kid, expected, next],
      );
      if (rowCount !== null && rowCount > 0) return;
      const { rows } = await pool.query<{ found: boolean }>(
        "SELECT EXISTS (SELECT 1 FROM keys WHERE kid = $1) AS found",
        [kid],
      );
      if (rows[0]?.found !== true) throw new StoreError("NOT_FOUND", `key ${kid} is not known`);
      throw new StoreError("CONFLICT", `key ${kid} changed since it was read`);
    },

    async retireKey(kid, at) {
      // A retirement never moves later: retiring twice keeps the earlier time.
      const { rowCount } = await pool.query(
        "UPDATE keys SET retired_at = LEAST(COALESCE(retired_at, $2), $2) WHERE kid = $1",
        [kid, at],
      );
      if (rowCount === 0) throw new StoreError("NOT_FOUND", `key ${kid} is not known`);
    },
  };
}

function keyParams(key: StoredKey): unknown[] {
  return [key.kid, key.alg, key.publicJwk, key.privateJwk, key.createdAt, key.retiredAt ?? null];
}

function storedKey(row: KeyRow): StoredKey {
  if (row.alg !== "EdDSA")
    throw new StoreError("CORRUPT", `key ${row.kid}: unsupported alg ${row.alg}`);
  if (
    !Number.isSafeInteger(row.created_at) ||
    (row.retired_at !== null && !Number.isSafeInteger(row.retired_at))
  ) {
    throw new StoreError("CORRUPT", `key ${row.kid}: a time is not a time`);
  }
  const key: StoredKey = {
    kid: row.kid,
    alg: row.alg,
    publicJwk: row.public_jwk,
    privateJwk: row.private_jwk,
    createdAt: row.created_at,
  };
  return row.retired_at === null ? key : { ...key, retiredAt: row.retired_at };
}
