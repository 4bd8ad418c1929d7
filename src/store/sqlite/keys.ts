import type { Database } from "better-sqlite3";
import { StoreError, type KeyStore, type StoredKey } from "../port.js";

interface KeyRow {
  readonly kid: string;
  readonly alg: string;
  readonly public_jwk: string;
  readonly private_jwk: string;
  readonly created_at: number;
  readonly retired_at: number | null;
}

/**
 * The signing-key half of the SQLite store. Statements are prepared once, here; errors are left
 * raw for the caller (openSqliteStore) to translate.
 */
export function sqliteKeyStore(db: Database): KeyStore {
  const list = db.prepare<[], KeyRow>(
    "SELECT kid, alg, public_jwk, private_jwk, created_at, retired_at FROM keys ORDER BY created_at, rowid",
  );
  const insert = db.prepare<[KeyRow], never>(`
    INSERT INTO keys (kid, alg, public_jwk, private_jwk, created_at, retired_at)
    VALUES (@kid, @alg, @public_jwk, @private_jwk, @created_at, @retired_at)
    ON CONFLICT (kid) DO NOTHING`);
  const anyActive = db
    .prepare<[], number>("SELECT EXISTS (SELECT 1 FROM keys WHERE retired_at IS NULL)")
    .pluck();
  const insertUnlessActive = db.transaction((row: KeyRow): boolean => {
    if (anyActive.get() === 1) return false;
    if (insert.run(row).changes === 0)
      throw new StoreError("CONFLICT", `key ${row.kid} exists already`);
    return true;
  });
  // A retirement never moves later: retiring twice keeps the earlier time.
  const retire = db.prepare<[{ kid: string; at: number }], never>(`
    UPDATE keys SET retired_at = min(coalesce(retired_at, @at), @at) WHERE kid = @kid`);

  const rewrap = db.prepare<[{ kid: string; expected: string; next: string }], never>(`
    UPDATE keys SET private_jwk = @next WHERE kid = @kid AND private_jwk = @expected`);
  const exists = db.prepare<[string], { n: number }>(
    "SELECT count(*) AS n FROM keys WHERE kid = ?",
  );

  return {
    async listKeys() {
      return list.all().map(storedKey);
    },
    async insertKey(key) {
      const { changes } = insert.run(keyRow(key));
      if (changes === 0) throw new StoreError("CONFLICT", `key ${key.kid} exists already`);
    },
    async insertKeyUnlessActive(key) {
      return insertUnlessActive.immediate(keyRow(key));
    },
    async retireKey(kid, at) {
      const { changes } = retire.run({ kid, at });
      if (changes === 0) throw new StoreError("NOT_FOUND", `key ${kid} is not known`);
    },
    async rewrapKey(kid, expected, next) {
      const { changes } = rewrap.run({ kid, expected, next });
      if (changes > 0) {
        // secure_delete zeroes the freed cells; the checkpoint moves the page out of the WAL, so
        // the old private half is in neither file afterwards.
        db.pragma("wal_checkpoint(TRUNCATE)");
        return;
      }
      if ((exists.get(kid)?.n ?? 0) === 0)
        throw new StoreError("NOT_FOUND", `key ${kid} is not known`);
      throw new StoreError("CONFLICT", `key ${kid} changed since it was read`);
    },
  };
}

function keyRow(key: StoredKey): KeyRow {
  return {
    kid: key.kid,
    alg: key.alg,
    public_jwk: key.publicJwk,
    private_jwk: key.privateJwk,
    created_at: key.createdAt,
    retired_at: key.retiredAt ?? null,
  };
}

function storedKey(row: KeyRow): StoredKey {
  if (row.alg !== "EdDSA")
    throw new StoreError("CORRUPT", `key ${row.kid}: unsupported alg ${row.alg}`);
  const key: StoredKey = {
    kid: row.kid,
    alg: row.alg,
    publicJwk: row.public_jwk,
    privateJwk: row.private_jwk,
    createdAt: row.created_at,
  };
  return row.retired_at === null ? key : { ...key, retiredAt: row.retired_at };
}
