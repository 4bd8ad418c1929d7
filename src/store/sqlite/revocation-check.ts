import type { Database } from "better-sqlite3";
import { StoreError } from "../port.js";

/** The most grant ids the revocation check keeps as "not revoked" (then it starts again). */
const MAX_KNOWN_UNREVOKED = 10_000;

/** The SQL of the epoch read; tests count its executions. */
export const EPOCH_READ_SQL = "SELECT epoch FROM revocation_epoch WHERE id = 1";

interface Waiting {
  readonly ids: readonly string[];
  readonly resolve: (revoked: boolean) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * The SQLite revocation check: whether any of `ids` (non-empty) is revoked, answered as of a read
 * made after the call. Errors are left raw for the caller (openSqliteStore) to translate.
 *
 * One epoch read per turn of the event loop: the first check of a turn schedules the read with
 * `setImmediate`, and every check asked until it runs waits for it. The read takes the waiting
 * checks before it begins, so a check asked once it has begun (from a callback it causes, or
 * later) waits for the next one. That is why the answer is as fresh as one read per call: the
 * read begins after every check it answers was asked, so it sees every revocation committed
 * before any of them. Each check is then answered from the ids seen not revoked under that
 * epoch, or by one statement that reads the answer and its epoch together (as fresh, being later).
 *
 * A failing read (busy, I/O, the epoch row missing: CORRUPT) rejects every check that waited for
 * it; nothing answers "not revoked" on an error. The immediate is not unref-ed: it keeps the
 * process alive for one turn, and only while a check waits, so a CLI that awaits a check gets its
 * answer. A read that finds the connection closed (the store closed while checks waited) rejects
 * them without touching it.
 */
export function sqliteRevocationCheck(db: Database): (ids: readonly string[]) => Promise<boolean> {
  const epochNow = db.prepare<[], number>(EPOCH_READ_SQL).pluck();
  // The epoch and the answer from one snapshot (one statement), so a "not revoked" is kept under the epoch it was true at.
  const revokedAndEpoch = db.prepare<[string], { epoch: number | null; revoked: number }>(`
    SELECT (SELECT epoch FROM revocation_epoch WHERE id = 1) AS epoch, EXISTS (
      SELECT 1 FROM grants WHERE revoked_at IS NOT NULL AND id IN (SELECT value FROM json_each(?))
    ) AS revoked`);
  const epochOf = (epoch: number | null | undefined): number => {
    if (typeof epoch !== "number")
      throw new StoreError("CORRUPT", "the revocation epoch is missing");
    return epoch;
  };
  /**
   * Ids seen not revoked in a snapshot whose revocation epoch is `epoch`. Every change that can
   * make an id read as revoked raises the epoch in its own transaction (the triggers of migration
   * 7), and the epoch only grows; so while an epoch read made after a check was asked still
   * answers `epoch`, no id here has been revoked since it was seen. Any other epoch empties the set.
   */
  let seen = { epoch: Number.NaN, ids: new Set<string>() };
  /** Answers one check under `epoch`, an epoch read made after it was asked. */
  const answer = (ids: readonly string[], epoch: number): boolean => {
    const known = seen.ids;
    if (ids.every((id) => known.has(id))) return false;
    const found = revokedAndEpoch.get(JSON.stringify(ids));
    if (found === undefined || found.revoked === 1) return true;
    if (epochOf(found.epoch) === epoch) {
      if (known.size + ids.length > MAX_KNOWN_UNREVOKED) known.clear();
      for (const id of ids) known.add(id);
    }
    return false;
  };

  let waiting: Waiting[] = [];
  const readAndAnswer = () => {
    // Taken before the read begins: a check asked from here on waits for the next read.
    const batch = waiting;
    waiting = [];
    if (!db.open) {
      const closed = new StoreError(
        "UNAVAILABLE",
        "sqlite store could not check revocations: the store closed before the check was read",
      );
      for (const check of batch) check.reject(closed);
      return;
    }
    let epoch: number;
    try {
      epoch = epochOf(epochNow.get());
    } catch (err) {
      for (const check of batch) check.reject(err);
      return;
    }
    if (epoch !== seen.epoch) seen = { epoch, ids: new Set() };
    for (const check of batch) {
      try {
        check.resolve(answer(check.ids, epoch));
      } catch (err) {
        check.reject(err);
      }
    }
  };

  return (ids) =>
    new Promise<boolean>((resolve, reject) => {
      waiting.push({ ids, resolve, reject });
      if (waiting.length === 1) setImmediate(readAndAnswer);
    });
}
