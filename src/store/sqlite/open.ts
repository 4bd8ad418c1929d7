import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { guardStore, STORE_DOING, type StoreOperations } from "../guard.js";
import { isStoreError, StoreError, type Store } from "../port.js";
import { sqliteApprovals } from "./approvals.js";
import { sqliteAudit } from "./audit.js";
import { sqliteBudgets } from "./budgets.js";
import { sqliteDecisionStore } from "./decisions.js";
import { toStoreError } from "./errors.js";
import { sqliteGrantStore } from "./grants.js";
import { createGroupCommit } from "./group-commit.js";
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
    // FULL: a commit is on disk (WAL fsync) before it returns; the group commit shares that flush.
    db.pragma("synchronous = FULL");
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
  const group = createGroupCommit(db);
  const audit = sqliteAudit(db);
  const approvals = sqliteApprovals(db, group, audit.append);
  const budgets = sqliteBudgets(db);
  const ops: StoreOperations = {
    ...sqliteGrantStore(db, group, audit.append),
    ...sqliteKeyStore(db),
    ...sqliteDecisionStore(db, { group, append: audit.append, consume: approvals.consume, expireDue: approvals.expireDue, charge: budgets.charge, usage: budgets.usage }),
    ...approvals.store,
    ...audit.store,
  };
  return guardStore(ops, STORE_DOING, {
    adapter: "sqlite store",
    translate: toStoreError,
    release: () => {
      // What is queued is committed (or fails) before the connection goes.
      group.flush();
      db.close();
    },
  });
}
