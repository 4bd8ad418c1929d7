import type { Database } from "better-sqlite3";
import { recordAuditCommitSince, startTimer } from "../../telemetry/instruments.js";

/** Runs units of work in shared transactions; `close` flushes what is queued. */
export interface GroupCommit {
  /** Queues `work`; it runs inside the next shared transaction (in its own savepoint) and resolves once that is durable. */
  run<T>(work: () => T): Promise<T>;
  /** Runs what is queued now, synchronously (before the database closes). */
  flush(): void;
}

interface Queued {
  readonly work: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Group commit for SQLite: units of work queued in the same turn of the event loop run in one
 * IMMEDIATE transaction, each in its own savepoint (one unit's failure rolls back only itself),
 * and the transaction commits once — with `synchronous = FULL`, one WAL fsync for the whole
 * group. Every promise resolves only after that commit, so nothing is answered before it is
 * durable; if the commit fails, every unit of the group rejects. Units run in queue order, so a
 * budget charged by one is seen by the next.
 */
export function createGroupCommit(db: Database): GroupCommit {
  let queue: Queued[] = [];
  let scheduled = false;

  const runGroup = db.transaction((group: readonly Queued[]) => {
    const results: ({ ok: true; value: unknown } | { ok: false; err: unknown })[] = [];
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

  const flush = () => {
    scheduled = false;
    const group = queue;
    queue = [];
    if (group.length === 0) return;
    let results;
    const started = startTimer();
    try {
      results = runGroup.immediate(group);
      recordAuditCommitSince(started, group.length);
    } catch (err) {
      for (const unit of group) unit.reject(err);
      return;
    }
    results.forEach((r, i) => {
      const unit = group[i] as Queued;
      if (r.ok) unit.resolve(r.value);
      else unit.reject(r.err);
    });
  };

  return {
    run<T>(work: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    flush,
  };
}
