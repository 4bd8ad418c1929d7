import type { Database } from "better-sqlite3";
import { closeSync, fdatasync, fdatasyncSync, openSync } from "node:fs";
import { recordAuditCommitSince, startTimer } from "../../telemetry/instruments.js";

/** Runs units of work in shared transactions; `close` flushes what is queued. */
export interface GroupCommit {
  /** Queues `work`; it runs inside the next shared transaction (in its own savepoint) and resolves once that is durable. */
  run<T>(work: () => T): Promise<T>;
  /** Runs what is queued now and makes it durable, synchronously (before the database closes); later groups are flushed at once too. */
  flush(): void;
}

/**
 * Makes what the committed transactions wrote durable: `flush(done)` calls `done` (with an error
 * when the flush failed) once it is on disk, without blocking the event loop; `flushSync` blocks.
 */
export interface DurableFile {
  flush(done: (err: Error | null) => void): void;
  flushSync(): void;
  /** Once no flush is in flight. */
  close(): void;
}

/**
 * The WAL file of a database on disk (opened with `synchronous = NORMAL`, so SQLite does not flush
 * in the commit), flushed with `fdatasync` on libuv's thread pool. The file is opened at the first
 * flush (SQLite creates it with the first write).
 */
export function walFile(path: string): DurableFile {
  let fd: number | undefined;
  let inFlight = 0;
  let closing = false;
  const release = () => {
    if (closing && inFlight === 0 && fd !== undefined) {
      closeSync(fd);
      fd = undefined;
    }
  };
  return {
    flush(done) {
      fd ??= openSync(path, "r");
      inFlight += 1;
      fdatasync(fd, (err) => {
        inFlight -= 1;
        release();
        done(err);
      });
    },
    flushSync() {
      fd ??= openSync(path, "r");
      fdatasyncSync(fd);
    },
    close() {
      closing = true;
      release();
    },
  };
}

interface Queued {
  readonly work: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

/**
 * Group commit for SQLite: units of work queued in the same turn of the event loop run in one
 * IMMEDIATE transaction, each in its own savepoint (one unit's failure rolls back only itself),
 * and the transaction commits once. Units run in queue order, so a budget charged by one is seen
 * by the next. Every promise resolves only after the group is durable; if the commit or the
 * flush fails, every unit of the group rejects.
 *
 * Durability: with `durable` (a database on disk), the commit writes the group's WAL frames and
 * the group is made durable by `durable.flush` — an fdatasync of the WAL on libuv's thread pool —
 * so the event loop serves other calls during the flush (0.3 ms to several ms on this machine's
 * disk) instead of blocking in it. That is `synchronous = FULL`'s guarantee (the WAL on disk
 * before the answer) with the flush off the main thread. A flush covers every frame written
 * before it, so a later group never leaves an earlier one behind. Without `durable` (`:memory:`)
 * a group resolves once committed.
 */
export function createGroupCommit(db: Database, durable?: DurableFile): GroupCommit {
  let queue: Queued[] = [];
  let scheduled = false;
  let closing = false;

  const runGroup = db.transaction((group: readonly Queued[]) => {
    const results: Outcome[] = [];
    for (const unit of group) {
      // A nested better-sqlite3 transaction is a SAVEPOINT: a unit that throws is rolled back alone.
      try {
        results.push({ ok: true, value: db.transaction(unit.work)() });
      } catch (err) {
        results.push({ ok: false, err });
      }
    }
    return results;
  });

  const settle = (group: readonly Queued[], results: readonly Outcome[], err: unknown) => {
    group.forEach((unit, i) => {
      const r = results[i] as Outcome;
      if (err !== undefined) unit.reject(err);
      else if (r.ok) unit.resolve(r.value);
      else unit.reject(r.err);
    });
  };

  const flushQueued = () => {
    scheduled = false;
    const group = queue;
    queue = [];
    if (group.length === 0) return;
    let results: Outcome[];
    const started = startTimer();
    try {
      results = runGroup.immediate(group);
    } catch (err) {
      settle(group, [], err);
      return;
    }
    // The audit-commit latency covers the transaction and, on disk, the flush that makes it durable.
    const durableNow = () => {
      recordAuditCommitSince(started, group.length);
      settle(group, results, undefined);
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
    run<T>(work: () => T): Promise<T> {
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
      flushQueued();
      durable?.close();
    },
  };
}
