import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createGroupCommit } from "../../src/store/sqlite/group-commit.js";
import { walFile, type DurableFile } from "../../src/store/sqlite/wal-file.js";

/** A durable file whose flushes finish only when the test says so. */
function heldFlushes(): {
  file: DurableFile;
  pending: ((err: Error | null) => void)[];
  synced: number;
} {
  const state = { pending: [] as ((err: Error | null) => void)[], synced: 0 };
  return {
    ...state,
    get synced() {
      return state.synced;
    },
    file: {
      flush: (done) => state.pending.push(done),
      flushSync: () => {
        state.synced += 1;
      },
      close: () => undefined,
    },
  };
}

const turn = () => new Promise((r) => setImmediate(r));

function database() {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE t (v INTEGER)");
  const insert = db.prepare<[number], never>("INSERT INTO t (v) VALUES (?)");
  const count = () => (db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n;
  return { db, insert, count };
}

describe("createGroupCommit()", () => {
  it("answers no unit of a group before its flush is done, and commits the group in one flush", async () => {
    const { db, insert, count } = database();
    const held = heldFlushes();
    const group = createGroupCommit(db, held.file);
    const settled: number[] = [];
    const units = [1, 2, 3].map((v) => group.run(() => insert.run(v)).then(() => settled.push(v)));
    await turn();
    await turn();
    expect(count()).toBe(3); // committed
    expect(held.pending).toHaveLength(1); // one flush for the three
    expect(settled).toEqual([]); // but nobody answered yet
    held.pending[0]?.(null);
    await Promise.all(units);
    expect(settled).toEqual([1, 2, 3]);
  });

  it("fails every unit of a group whose flush fails: an error, never a success", async () => {
    const { db, insert } = database();
    const held = heldFlushes();
    const group = createGroupCommit(db, held.file);
    const units = [1, 2].map((v) => group.run(() => insert.run(v)));
    await turn();
    held.pending[0]?.(new Error("EIO: the disk failed"));
    for (const unit of units) await expect(unit).rejects.toThrow("EIO");
  });

  it("rolls back a unit that throws alone: what it wrote is gone, the rest of its group commits", async () => {
    const { db, insert } = database();
    const group = createGroupCommit(db);
    const values = () => db.prepare("SELECT v FROM t ORDER BY rowid").pluck().all();
    const failing = () => {
      insert.run(2);
      throw new Error("unit failed after writing");
    };
    const units = [
      group.run(() => insert.run(1)),
      group.run(failing),
      group.run(() => insert.run(3)),
    ];
    await expect(units[1]).rejects.toThrow("unit failed");
    await Promise.all([units[0], units[2]]);
    expect(values()).toEqual([1, 3]);
    // A group of one: its failure rolls back the whole transaction.
    await expect(group.run(failing)).rejects.toThrow("unit failed");
    expect(values()).toEqual([1, 3]);
    expect(db.inTransaction).toBe(false);
  });

  it("flushes synchronously what is queued when it is closed", async () => {
    const { db, insert, count } = database();
    const held = heldFlushes();
    const group = createGroupCommit(db, held.file);
    const unit = group.run(() => insert.run(7));
    group.flush();
    expect(count()).toBe(1);
    expect(held.synced).toBe(1);
    await expect(unit).resolves.toBeDefined();
  });

  it("flushes a database's real WAL file, then answers", async () => {
    const dir = mkdtempSync(join(tmpdir(), "charter-group-commit-"));
    const file = join(dir, "t.db");
    const db = new Database(file);
    try {
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.exec("CREATE TABLE t (v INTEGER)");
      const group = createGroupCommit(db, walFile(`${file}-wal`));
      const insert = db.prepare<[number], never>("INSERT INTO t (v) VALUES (?)");
      await Promise.all([1, 2, 3].map((v) => group.run(() => insert.run(v))));
      group.flush();
      expect((db.prepare("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBe(3);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe("while another connection holds the write lock", () => {
    /** A database file with a second connection (another worker on the same file) that can take the lock. */
    function shared() {
      const dir = mkdtempSync(join(tmpdir(), "charter-group-lock-"));
      const file = join(dir, "t.db");
      const db = new Database(file, { timeout: 5000 });
      db.pragma("journal_mode = WAL");
      db.exec("CREATE TABLE t (v INTEGER)");
      const other = new Database(file);
      const insert = db.prepare<[number], never>("INSERT INTO t (v) VALUES (?)");
      const values = () => db.prepare("SELECT v FROM t ORDER BY rowid").pluck().all();
      const close = () => {
        other.close();
        db.close();
        rmSync(dir, { recursive: true, force: true });
      };
      return { db, other, insert, values, close };
    }

    it("keeps the event loop turning, and commits what was queued meanwhile as one group once the lock is free", async () => {
      const { db, other, insert, values, close } = shared();
      try {
        const group = createGroupCommit(db, undefined, { busyTimeoutMs: 5000, retryMs: 1 });
        other.exec("BEGIN IMMEDIATE");
        const first = group.run(() => insert.run(1));
        let turns = 0;
        const started = Date.now();
        // Blocking in SQLite's busy handler would stop these timers until the lock is free.
        while (Date.now() - started < 60) {
          await new Promise((r) => setTimeout(r, 1));
          turns += 1;
        }
        expect(turns).toBeGreaterThan(10);
        const later = group.run(() => insert.run(2));
        expect(values()).toEqual([]);
        other.exec("COMMIT");
        await Promise.all([first, later]);
        expect(values()).toEqual([1, 2]);
        group.flush();
      } finally {
        close();
      }
    });

    it("waits for the lock in SQLite's busy handler when it flushes at close, up to the busy timeout", () => {
      const { db, other, insert, values, close } = shared();
      try {
        const group = createGroupCommit(db, undefined, { busyTimeoutMs: 80, retryMs: 1 });
        other.exec("BEGIN IMMEDIATE");
        const unit = group.run(() => insert.run(1));
        const started = performance.now();
        group.flush();
        expect(performance.now() - started).toBeGreaterThanOrEqual(60);
        other.exec("ROLLBACK");
        expect(values()).toEqual([]);
        return expect(unit).rejects.toMatchObject({ code: "SQLITE_BUSY" });
      } finally {
        close();
      }
    });

    it("fails every unit with SQLITE_BUSY once the lock stays held past the busy timeout, and writes nothing", async () => {
      const { db, other, insert, values, close } = shared();
      try {
        const group = createGroupCommit(db, undefined, { busyTimeoutMs: 40, retryMs: 5 });
        other.exec("BEGIN IMMEDIATE");
        const units = [1, 2].map((v) => group.run(() => insert.run(v)));
        for (const unit of units) await expect(unit).rejects.toMatchObject({ code: "SQLITE_BUSY" });
        other.exec("ROLLBACK");
        expect(values()).toEqual([]);
        await group.run(() => insert.run(3));
        expect(values()).toEqual([3]);
        group.flush();
      } finally {
        close();
      }
    });
  });
});
