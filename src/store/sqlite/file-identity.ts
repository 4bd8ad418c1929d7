import { closeSync, openSync, readSync, statSync } from "node:fs";
import { StoreError } from "../port.js";

/**
 * Watches the files a SQLite connection opened, so that a store file deleted, replaced or
 * truncated under a running process is noticed instead of served from: better-sqlite3 keeps
 * reading and writing an unlinked inode without complaint. With `header`, a file overwritten in
 * place (same inode) by another store, or by anything but a Charter store, is noticed too: its
 * SQLite header's `application_id` and `user_version` (32 bits of the store id) are read back.
 * `check()` runs before every store operation: one `stat` of the database file, a 12-byte read
 * of its header (through a descriptor held open: an overwrite in place keeps the inode, so it
 * reads what is there now) and one `stat` of its WAL, at most once per turn of the
 * event loop (an Authorize makes three or four store operations in the turn it arrives in; a
 * change is seen by the first operation of the next turn). Once a change is seen the store stays
 * failed (UNAVAILABLE) until it is reopened.
 */
export interface FileIdentity {
  check(): void;
  /** Closes the descriptor the header is read through (with the store). */
  close(): void;
}

/** What a Charter store's SQLite header says of it: `application_id` and `user_version` (32 bits of its store id). */
export interface StoreHeader {
  readonly applicationId: number;
  readonly userVersion: number;
}

interface Seen {
  readonly dev: number;
  readonly ino: number;
}

export function watchFileIdentity(file: string, header?: StoreHeader): FileIdentity {
  const db = identity(file);
  if (db === undefined)
    throw new StoreError("UNAVAILABLE", `${file}: the database file vanished as it was opened`);
  let wal = identity(`${file}-wal`);
  let size = statSync(file).size;
  let fd = header === undefined ? undefined : openSync(file, "r");
  let broken: string | undefined;
  const fail = (why: string): never => {
    broken = why;
    throw new StoreError("UNAVAILABLE", `${file}: ${why}; restart Charter on an intact store`);
  };
  // True from a check until the event loop's next check phase.
  let checkedThisTurn = false;
  const nextTurn = () => {
    checkedThisTurn = false;
  };
  return {
    check() {
      if (broken !== undefined)
        throw new StoreError(
          "UNAVAILABLE",
          `${file}: ${broken}; restart Charter on an intact store`,
        );
      if (checkedThisTurn) return;
      let now;
      try {
        now = statSync(file);
      } catch {
        return fail("the database file was deleted under the running store");
      }
      if (now.dev !== db.dev || now.ino !== db.ino)
        fail("the database file was replaced under the running store");
      // Without VACUUM (Charter never runs one) a SQLite file only grows.
      if (now.size < size) fail("the database file was truncated under the running store");
      size = now.size;
      // Overwritten in place (same inode): another store's id, or not Charter's file at all.
      if (fd !== undefined && header !== undefined && !sameHeader(fd, header))
        fail(
          "the database file was overwritten in place by another store (its application_id or store id changed)",
        );
      const w = identity(`${file}-wal`);
      if (wal !== undefined && (w === undefined || w.dev !== wal.dev || w.ino !== wal.ino))
        fail("the write-ahead log was deleted or replaced under the running store");
      wal ??= w;
      checkedThisTurn = true;
      setImmediate(nextTurn).unref();
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

function identity(path: string): Seen | undefined {
  try {
    const s = statSync(path);
    return { dev: s.dev, ino: s.ino };
  } catch {
    return undefined;
  }
}

/** Whether the file's SQLite header still carries `header` (bytes 60-63 `user_version`, 68-71 `application_id`). */
function sameHeader(fd: number, header: StoreHeader): boolean {
  const bytes = Buffer.alloc(12);
  try {
    if (readSync(fd, bytes, 0, 12, 60) !== 12) return false;
  } catch {
    return false;
  }
  return (
    bytes.readInt32BE(0) === header.userVersion && bytes.readInt32BE(8) === header.applicationId
  );
}
