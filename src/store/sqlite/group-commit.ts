import type { Database } from "better-sqlite3";
import { recordAuditCommitSince, startTimer } from "../../telemetry/instruments.js";
import type { DurableFile } from "./wal-file.js";

/** Runs units of work in shared transactions; `close` flushes what is queued. */
export interface GroupCommit {
  /** Queues `work`; it runs inside the next shared transaction (in its own savepoint) and resolves once that is durable. */
  run<T>(work: (unit: GroupUnit) => T): Promise<T>;
  /** Runs what is queued now and makes it durable, synchronously (before the database closes); later groups are flushed at once too. */
  flush(): void;
  /**
   * Runs `write` (a write outside the group commit, synchronous) with the connection's busy
   * timeout raised to `busyTimeoutMs`, so that it waits for another connection's lock in SQLite's
   * busy handler; the timeout is 0 again afterwards.
   */
  waitingForLock<T>(write: () => T): T;
}

/** State a group keeps in memory beside its transaction (budget counters): made for one group, written before it commits. */
export interface GroupShared {
  /** Inside the transaction, just before the group commits; a failure fails the whole group. */
  beforeCommit(): void;
}

/** What a unit of work can ask of the group it runs in. */
export interface GroupUnit {
  /**
   * The group's state made by `create` (the first unit of the group to ask makes it; `create`
   * itself is the key). It is dropped when the group ends, committed or not: another connection
   * may write before the next group, so nothing in it outlives the write lock.
   */
  shared<T extends GroupShared>(create: () => T): T;
  /** Runs `undo` if this unit is rolled back alone (its savepoint), after SQLite rolled back its writes. */
  onRollback(undo: () => void): void;
}

interface Queued {
  readonly work: (unit: GroupUnit) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

/** How the group waits for another connection's write lock (another worker, or another server, on the same file). */
export interface LockWait {
  /** How long a group waits for the lock before every unit of it fails (SQLITE_BUSY, UNAVAILABLE). */
  readonly busyTimeoutMs: number;
  /** The pause between two attempts to take the lock; the queue keeps filling meanwhile. Default 1. */
  readonly retryMs?: number;
}

/** True when SQLite answered "another connection holds the lock" (SQLITE_BUSY and its extended codes). */
function isBusy(err: unknown): boolean {
  return (
    err instanceof Error &&
    "code" in err &&
    typeof err.code === "string" &&
    err.code.startsWith("SQLITE_BUSY")
  );
}

/** Called after every durable group with the number of its units (the WAL checkpointer counts them). */
export type OnDurable = (units: number) => void;

/**
 * Group commit for SQLite: units of work queued in the same turn of the event loop run in one
 * IMMEDIATE transaction, each in its own savepoint (one unit's failure rolls back only itself),
 * and the transaction commits once. Units run in queue order, so a budget charged by one is seen
 * by the next. Every promise resolves only after the group is durable; if the commit or the
 * flush fails, every unit of the group rejects. A unit may keep state for its group in memory
 * (`GroupUnit.shared`: the budget counters), written just before the commit and dropped with the
 * group; what a unit changed in it is undone (`onRollback`) when its savepoint is rolled back.
 *
 * The lock: the group commit sets the connection's busy timeout to 0 once, so `BEGIN IMMEDIATE`
 * never waits in SQLite's busy handler; a write outside the group that should wait runs in
 * `waitingForLock`, and `flush` (at close) waits up to `busyTimeoutMs`. When another connection
 * holds the write lock, the group is retried on a short timer instead of blocking the event loop
 * in SQLite's busy handler, so this process keeps serving calls and the next attempt commits a
 * bigger group. A group that cannot take the lock for `busyTimeoutMs` fails with SQLite's
 * SQLITE_BUSY (UNAVAILABLE at the adapter's edge): a stuck lock ends in an error, never an answer.
 *
 * Durability: with `durable` (a database on disk), the commit writes the group's WAL frames and
 * the group is made durable by `durable.flush` — an fdatasync of the WAL on libuv's thread pool —
 * so the event loop serves other calls during the flush (0.3 ms to several ms on this machine's
 * disk) instead of blocking in it. That is `synchronous = FULL`'s guarantee (the WAL on disk
 * before the answer) with the flush off the main thread. A flush covers every frame written
 * before it, so a later group never leaves an earlier one behind. Without `durable` (`:memory:`)
 * a group resolves once committed.
 */
export function createGroupCommit(
  db: Database,
  durable?: DurableFile,
  lock: LockWait = { busyTimeoutMs: 5000 },
  onDurable?: OnDurable,
): GroupCommit {
  const retryMs = lock.retryMs ?? 1;
  let queue: Queued[] = [];
  let scheduled = false;
  let closing = false;
  /** When the oldest queued unit first found the lock held (performance.now()), while it waits for it. */
  let waitingSince: number | undefined;
  let retry: NodeJS.Timeout | undefined;
  const begin = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const rollback = db.prepare("ROLLBACK");

  db.pragma("busy_timeout = 0");
  const waitingForLock = <T>(write: () => T): T => {
    db.pragma(`busy_timeout = ${lock.busyTimeoutMs}`);
    try {
      return write();
    } finally {
      db.pragma("busy_timeout = 0");
    }
  };

  /** Takes the write lock at once or answers the busy error; on close, waits as long as the busy timeout allows. */
  const tryBegin = (): unknown => {
    if (closing) {
      waitingForLock(() => begin.run());
      return undefined;
    }
    try {
      begin.run();
      return undefined;
    } catch (err) {
      if (isBusy(err)) return err;
      throw err;
    }
  };

  const savepoint = db.prepare("SAVEPOINT unit");
  const release = db.prepare("RELEASE unit");
  const rollbackTo = db.prepare("ROLLBACK TO unit");

  /** The running group's shared state, by the function that made it, and the running unit's undos. */
  const shared = new Map<() => GroupShared, GroupShared>();
  const undos: (() => void)[] = [];
  const unitApi: GroupUnit = {
    shared<T extends GroupShared>(create: () => T): T {
      let state = shared.get(create);
      if (state === undefined) {
        state = create();
        shared.set(create, state);
      }
      return state as T;
    },
    onRollback(undo) {
      undos.push(undo);
    },
  };

  /** Runs one unit in its own savepoint (prepared once: a unit costs two statements), rolled back alone when it throws. */
  const inSavepoint = (unit: Queued): Outcome => {
    savepoint.run();
    undos.length = 0;
    try {
      const value = unit.work(unitApi);
      release.run();
      return { ok: true, value };
    } catch (err) {
      // A failure SQLite answered by rolling back the whole transaction fails the whole group (nothing of it is written).
      if (!db.inTransaction) throw err;
      rollbackTo.run();
      release.run();
      for (let i = undos.length - 1; i >= 0; i--) (undos[i] as () => void)();
      return { ok: false, err };
    }
  };

  /** Writes the group's shared state, then commits. */
  const commitGroup = () => {
    for (const state of shared.values()) state.beforeCommit();
    commit.run();
  };

  /**
   * Runs the group inside the open transaction and commits it; rolls back and throws when the
   * commit fails. A group of one needs no savepoint: its failure rolls back the transaction. The
   * group's shared state goes with the group, whatever its end.
   */
  const runGroup = (group: readonly Queued[]): Outcome[] => {
    try {
      const only = group.length === 1 ? group[0] : undefined;
      if (only !== undefined) {
        let value: unknown;
        try {
          value = only.work(unitApi);
        } catch (err) {
          if (db.inTransaction) rollback.run();
          return [{ ok: false, err }];
        }
        commitGroup();
        return [{ ok: true, value }];
      }
      const results = group.map(inSavepoint);
      commitGroup();
      return results;
    } catch (err) {
      if (db.inTransaction) rollback.run();
      throw err;
    } finally {
      shared.clear();
      undos.length = 0;
    }
  };

  /** Takes the whole queue as one group; nothing is scheduled or waiting after it. */
  const take = (): Queued[] => {
    const group = queue;
    queue = [];
    scheduled = false;
    waitingSince = undefined;
    return group;
  };

  const settle = (group: readonly Queued[], results: readonly Outcome[], err: unknown) => {
    group.forEach((unit, i) => {
      const r = results[i] as Outcome;
      if (err !== undefined) unit.reject(err);
      else if (r.ok) unit.resolve(r.value);
      else unit.reject(r.err);
    });
  };

  const flushQueued = () => {
    retry = undefined;
    if (queue.length === 0) {
      scheduled = false;
      return;
    }
    const started = startTimer();
    let busy: unknown;
    try {
      busy = tryBegin();
    } catch (err) {
      settle(take(), [], err);
      return;
    }
    if (busy !== undefined) {
      const now = performance.now();
      waitingSince ??= now;
      if (now - waitingSince < lock.busyTimeoutMs) {
        // Still scheduled: units queued meanwhile join this group.
        retry = setTimeout(flushQueued, retryMs);
        return;
      }
      settle(take(), [], busy);
      return;
    }
    const group = take();
    let results: Outcome[];
    try {
      results = runGroup(group);
    } catch (err) {
      settle(group, [], err);
      return;
    }
    // The audit-commit latency covers the transaction and, on disk, the flush that makes it durable.
    const durableNow = () => {
      recordAuditCommitSince(started, group.length);
      settle(group, results, undefined);
      onDurable?.(group.length);
    };
    if (durable === undefined) {
      durableNow();
      return;
    }
    try {
      if (closing) {
        durable.flushSync();
        durableNow();
      } else {
        durable.flush((err) => (err ? settle(group, results, err) : durableNow()));
      }
    } catch (err) {
      settle(group, results, err);
    }
  };

  return {
    run<T>(work: (unit: GroupUnit) => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flushQueued);
        }
      });
    },
    flush() {
      closing = true;
      if (retry !== undefined) clearTimeout(retry);
      flushQueued();
      durable?.close();
    },
    waitingForLock,
  };
}
