import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { guardStore, STORE_DOING, type StoreOperations } from "../guard.js";
import { isStoreError, StoreError, type Store } from "../port.js";
import { sqliteDecisionStore } from "./decisions.js";
import { toStoreError } from "./errors.js";
import { sqliteGrantStore } from "./grants.js";
import { sqliteKeyStore } from "./keys.js";
import { applySqliteMigrations } from "./migrate.js";
import { SQLITE_MIGRATIONS } from "./migrations.js";

/** Where and how to open the embedded store. */
export interface SqliteStoreOptions {
  /** The database file; its directory is created when missing. */
  readonly file: string;
  /** How long a statement waits for another connection's lock before failing UNAVAILABLE. Default 5000. */
  readonly busyTimeoutMs?: number;
  /** Unix seconds, for the migration history. Default: the system clock. */
  readonly now?: () => number;
}

/**
 * Opens (creating when needed) the embedded SQLite store: WAL journal, foreign keys on, schema
 * migrated to this Charter's version. Fails with a StoreError: UNAVAILABLE when the file cannot
 * be opened, CORRUPT when it is not a database or its schema is newer than this code.
 */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<Store> {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  let db: Database.Database | undefined;
  try {
    if (options.file !== ":memory:") mkdirSync(dirname(options.file), { recursive: true });
    db = new Database(options.file, { timeout: options.busyTimeoutMs ?? 5000 });
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    applySqliteMigrations(db, SQLITE_MIGRATIONS, now);
    return guarded(db);
  } catch (err) {
    db?.close();
    if (isStoreError(err)) throw new StoreError(err.code, `${options.file}: ${err.message}`, { cause: err });
    throw toStoreError(err, `open ${options.file}`);
  }
}

/**
 * The store over an open, migrated database. Every method answers a promise and fails only
 * with a StoreError; after close() every method fails UNAVAILABLE.
 */
function guarded(db: Database.Database): Store {
  const ops: StoreOperations = { ...sqliteGrantStore(db), ...sqliteKeyStore(db), ...sqliteDecisionStore(db) };
  return guardStore(ops, STORE_DOING, {
    adapter: "sqlite store",
    translate: toStoreError,
    release: () => {
      db.close();
    },
  });
}
