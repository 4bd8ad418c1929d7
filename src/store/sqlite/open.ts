import { createAuditAppends } from "../audit-appends.js";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { guardStore, STORE_DOING, type StoreOperations } from "../guard.js";
import { isStoreError, StoreError, type Store } from "../port.js";
import { sqliteApiKeyStore } from "./api-keys.js";
import { sqliteApprovalLinks } from "./approval-links.js";
import { sqliteApprovals } from "./approvals.js";
import { sqliteAudit } from "./audit.js";
import { sqliteBudgets } from "./budgets.js";
import { sqliteDecisionStore } from "./decisions.js";
import { sqliteEndorsements } from "./endorsements.js";
import { toStoreError } from "./errors.js";
import { watchFileIdentity, type FileIdentity, type StoreHeader } from "./file-identity.js";
import {
  CHARTER_APPLICATION_ID,
  checkSqliteStoreBeforeOpen,
  isStoreIdentityError,
  reconcileStoreId,
  STORE_ID_META,
  storeIdFile,
  storeIdTag,
  StoreIdentityError,
} from "../store-identity.js";
import { sqliteGrantStore } from "./grants.js";
import { sqliteRuns } from "./runs.js";
import { createGroupCommit, type LockWait } from "./group-commit.js";
import { walFile, type DurableFile } from "./wal-file.js";
import { sqliteKeyStore } from "./keys.js";
import { applySqliteMigrations } from "./migrate.js";
import { SQLITE_MIGRATIONS } from "./migrations.js";
import { startWalCheckpointer, type WalCheckpointer } from "./wal-checkpointer.js";

/** Where and how to open the embedded store. */
export interface SqliteStoreOptions {
  /** The database file; its directory is created when missing. */
  readonly file: string;
  /**
   * How long a write waits for another connection's lock before failing UNAVAILABLE. Default 5000.
   * The group commit waits on a timer (the event loop keeps serving); other writes, the migrations
   * and the close wait in SQLite's busy handler. Reads never wait for a lock in WAL mode.
   */
  readonly busyTimeoutMs?: number;
  /** Unix seconds, for the migration history. Default: the system clock. */
  readonly now?: () => number;
  /** Where the store's warnings go (the WAL checkpointer's). Default: `process.emitWarning`, code CHARTER_WAL_CHECKPOINT. */
  readonly warn?: (message: string) => void;
  /**
   * Whether a missing store file may be created (default true). False: a missing store is
   * refused (`src/store/store-identity.ts`); a store gone while its id file stays is refused either way.
   */
  readonly create?: boolean;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** Owner-only permissions: the store holds the signing keys. */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/**
 * Opens (creating when needed) the embedded SQLite store: WAL journal, foreign keys on, freed
 * cells zeroed (`secure_delete`), schema migrated to this Charter's version. A missing directory
 * is created 0700 and the files 0600 (SQLite gives its `-wal` and `-shm` the database file's
 * mode; they are chmod-ed too, for stores made before). On disk, SQLite's automatic checkpoint is
 * off: a thread of the store's own moves the WAL into the database file (`startWalCheckpointer`),
 * and if that thread fails SQLite's own checkpoint is turned back on. Every later operation first
 * checks the file is still the one opened (`watchFileIdentity`). Fails with a StoreError: UNAVAILABLE when
 * the file cannot be opened, CORRUPT when it is not a database or its schema is newer than this code.
 */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<Store> {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  let db: Database.Database | undefined;
  try {
    const onDisk = options.file !== ":memory:";
    if (onDisk) checkSqliteStoreBeforeOpen(options.file, options.create ?? true);
    if (onDisk) createPrivately(options.file);
    db = new Database(options.file, { timeout: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
    if (onDisk) refuseForeign(db, options.file);
    db.pragma("journal_mode = WAL");
    // On disk the group commit makes each group durable itself (an fdatasync of the WAL, off the
    // event loop) before any of its units resolves; NORMAL keeps SQLite from flushing in the commit too.
    db.pragma(onDisk ? "synchronous = NORMAL" : "synchronous = FULL");
    db.pragma("foreign_keys = ON");
    db.pragma("secure_delete = ON");
    applySqliteMigrations(db, SQLITE_MIGRATIONS, now);
    const header = onDisk ? await stampIdentity(db, options.file) : undefined;
    if (onDisk)
      for (const f of [options.file, `${options.file}-wal`, `${options.file}-shm`])
        if (existsSync(f)) chmodSync(f, FILE_MODE);
    const lock = { busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS };
    return guarded(
      db,
      lock,
      onDisk
        ? {
            identity: watchFileIdentity(options.file, header),
            wal: walFile(`${options.file}-wal`),
            file: options.file,
            ...(options.warn === undefined ? {} : { warn: options.warn }),
          }
        : undefined,
    );
  } catch (err) {
    db?.close();
    if (isStoreIdentityError(err)) throw err;
    if (isStoreError(err))
      throw new StoreError(err.code, `${options.file}: ${err.message}`, { cause: err });
    throw toStoreError(err, `open ${options.file}`);
  }
}

/** What a database on disk has and `:memory:` has not. */
interface OnDisk {
  readonly file: string;
  readonly identity: FileIdentity;
  readonly wal: DurableFile;
  readonly warn?: (message: string) => void;
}

/**
 * The store over an open, migrated database. Every method answers a promise and fails only
 * with a StoreError; after close() every method fails UNAVAILABLE.
 */
function guarded(db: Database.Database, lock: LockWait, disk: OnDisk | undefined): Store {
  const checkpointer = disk === undefined ? undefined : walCheckpointer(db, disk.file, disk.warn);
  const appends = createAuditAppends();
  const audit = sqliteAudit(db);
  const group = createGroupCommit(db, disk?.wal, lock, (units) => {
    checkpointer?.wrote(units);
    appends.notify(audit.takeAppended());
  });
  // The writes that bypass the group commit wait for another connection's lock in SQLite's busy
  // handler (the group commit keeps the connection's busy timeout at 0), and are flushed to disk
  // before they answer (the connection runs with synchronous = NORMAL).
  const outsideGroup = <T>(write: () => Promise<T>): Promise<T> => {
    const answer = group.waitingForLock(write);
    disk?.wal.flushSync();
    return answer;
  };
  const approvals = sqliteApprovals(db, group, audit.append);
  const budgets = sqliteBudgets(db);
  const keys = sqliteKeyStore(db);
  const apiKeys = sqliteApiKeyStore(db);
  const runs = sqliteRuns(db, group, audit.append);
  const links = sqliteApprovalLinks(db);
  const ops: StoreOperations = {
    ...sqliteGrantStore(db, group, audit.append, runs.prune),
    ...keys,
    insertKey: (key) => outsideGroup(() => keys.insertKey(key)),
    insertKeyUnlessActive: (key) => outsideGroup(() => keys.insertKeyUnlessActive(key)),
    retireKey: (kid, at) => outsideGroup(() => keys.retireKey(kid, at)),
    rewrapKey: (kid, expected, next) => outsideGroup(() => keys.rewrapKey(kid, expected, next)),
    ...sqliteDecisionStore(db, {
      group,
      append: audit.append,
      consume: approvals.consume,
      expireDue: approvals.expireDue,
      charge: budgets.charge,
      usage: budgets.usage,
      runs,
    }),
    ...runs.store,
    ...approvals.store,
    ...sqliteEndorsements(db, group, audit.append, approvals),
    ...audit.store,
    putCheckpoint: (checkpoint) => outsideGroup(() => audit.store.putCheckpoint(checkpoint)),
    pruneAudit: (anchorSeq) => outsideGroup(() => audit.store.pruneAudit(anchorSeq)),
    appendAudit: (draft) => group.run(() => audit.append(draft)),
    ...apiKeys,
    createApiKey: (key) => outsideGroup(() => apiKeys.createApiKey(key)),
    revokeApiKey: (id, at) => outsideGroup(() => apiKeys.revokeApiKey(id, at)),
    writeMeta: (name, value) => outsideGroup(() => apiKeys.writeMeta(name, value)),
    ...links,
    createApprovalLink: (link) => outsideGroup(() => links.createApprovalLink(link)),
    redeemApprovalLink: (hash, at) => outsideGroup(() => links.redeemApprovalLink(hash, at)),
    pruneApprovalLinks: (before) => outsideGroup(() => links.pruneApprovalLinks(before)),
    // The guard's `before` hook (the file identity check) is the whole of it.
    checkIntact: async () => undefined,
  };
  const store = guardStore(ops, STORE_DOING, {
    adapter: "sqlite store",
    translate: toStoreError,
    release: async () => {
      await checkpointer?.close();
      // What is queued is committed (or fails) before the connection goes.
      group.flush();
      db.close();
      disk?.identity.close();
    },
    ...(disk ? { before: () => disk.identity.check() } : {}),
  });
  return { ...store, traits: SQLITE_TRAITS, onAuditAppended: appends.subscribe };
}

/** One connection, one queue: the group commit runs units in the order they were asked. */
const SQLITE_TRAITS = { commitsInQueueOrder: true } as const;

/** SQLite's automatic checkpoint off, and the store's checkpointer thread instead (SQLite's back on if the thread fails). */
function walCheckpointer(
  db: Database.Database,
  file: string,
  warn: ((message: string) => void) | undefined,
): WalCheckpointer {
  db.pragma("wal_autocheckpoint = 0");
  return startWalCheckpointer(file, {
    onFailure: () => db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`),
    ...(warn === undefined ? {} : { warn }),
  });
}

/** SQLite's default automatic checkpoint interval, in WAL pages. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

/** Creates the directory (0700) and the database file (0600) before SQLite does, with the modes it then copies. */
function createPrivately(file: string): void {
  const dir = dirname(file);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  closeSync(openSync(file, "a", FILE_MODE));
}

/** Refuses a SQLite database another application made (before anything is written to it). */
function refuseForeign(db: Database.Database, file: string): void {
  const id = db.pragma("application_id", { simple: true }) as number;
  if (id !== 0 && id !== CHARTER_APPLICATION_ID)
    throw new StoreIdentityError(
      `${file} is not a Charter store (its SQLite application_id is ${id}, Charter's is ${CHARTER_APPLICATION_ID}); point dataDir or database at a Charter store, or move the file away and run \`charter init\``,
    );
}

/**
 * Gives the store its identity (`reconcileStoreId`): Charter's `application_id` and 32 bits of the
 * store id as `user_version` in the header, checkpointed into the file so the per-call check
 * (`watchFileIdentity`) reads them there.
 */
async function stampIdentity(db: Database.Database, file: string): Promise<StoreHeader> {
  const read = db.prepare<[string], { value: string }>(
    "SELECT value FROM store_meta WHERE name = ?",
  );
  const claim = db.prepare<[string, string], never>(
    "INSERT INTO store_meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
  );
  const id = await reconcileStoreId(
    {
      read: async () => read.get(STORE_ID_META)?.value,
      claim: async (value) => {
        claim.run(STORE_ID_META, value);
        return (read.get(STORE_ID_META) as { value: string }).value;
      },
    },
    storeIdFile(file),
    `the store ${file}`,
  );
  const header = { applicationId: CHARTER_APPLICATION_ID, userVersion: storeIdTag(id) };
  if (db.pragma("application_id", { simple: true }) !== header.applicationId)
    db.pragma(`application_id = ${header.applicationId}`);
  if (db.pragma("user_version", { simple: true }) !== header.userVersion)
    db.pragma(`user_version = ${header.userVersion}`);
  db.pragma("wal_checkpoint(TRUNCATE)");
  return header;
}
