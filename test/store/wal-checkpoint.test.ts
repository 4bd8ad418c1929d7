import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteStore, type Store } from "../../src/store/index.js";
import { startWalCheckpointer } from "../../src/store/sqlite/wal-checkpointer.js";
import { makeApiKey, makeDecision } from "./fixtures.js";
import { tempDirs } from "./temp-dirs.js";

const dirs = tempDirs("charter-wal-checkpoint");
const stores: Store[] = [];

/** The checkpointer's warnings (a failed thread hands checkpoints back to SQLite, which would bound the WAL too). */
const warnings: string[] = [];
const onWarning = (w: Error & { code?: string }) => {
  if (w.code === "CHARTER_WAL_CHECKPOINT") warnings.push(w.message);
};

beforeEach(() => {
  process.on("warning", onWarning);
});

afterEach(async () => {
  process.off("warning", onWarning);
  for (const s of stores.splice(0)) await s.close();
  dirs.removeAll();
  warnings.splice(0);
});

async function open(file: string, options: { busyTimeoutMs?: number } = {}): Promise<Store> {
  const store = await openSqliteStore({ file, ...options });
  stores.push(store);
  return store;
}

const size = (path: string) => (existsSync(path) ? statSync(path).size : 0);
const count = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare("SELECT (SELECT count(*) FROM decisions) + (SELECT count(*) FROM audit_log)")
      .pluck()
      .get();
  } finally {
    db.close();
  }
};

/**
 * A bound on the WAL file: without checkpoints it would grow past 40 MB in each test below (a
 * decision writes about 4.5 pages of 4 KiB); a checkpoint comes every 256 units of a connection.
 */
const WAL_BOUND_BYTES = 12 * 1024 * 1024;

describe("the WAL checkpointer of a SQLite store", () => {
  it("keeps the WAL bounded under sustained groups of one, and every record is there after reopening", async () => {
    const file = join(dirs.make(), "charter.db");
    const store = await open(file);
    let largest = 0;
    for (let i = 0; i < 2500; i++) {
      await store.commitDecision(makeDecision(`dec_${i}`, { callId: `call-${i}` }));
      if (i % 50 === 0) largest = Math.max(largest, size(`${file}-wal`));
    }
    expect(largest).toBeGreaterThan(0);
    expect(largest).toBeLessThan(WAL_BOUND_BYTES);
    expect(warnings).toEqual([]);
    // The pages are in the database file, not only in the WAL.
    expect(size(file)).toBeGreaterThan(512 * 1024);
    await store.close();
    const reopened = await open(file);
    expect(await reopened.getDecision("dec_2499")).toBeDefined();
    expect(count(file)).toBe(5000);
  }, 120_000);

  it("is safe with two connections on one file each checkpointing (two servers, or --workers 2)", async () => {
    const file = join(dirs.make(), "charter.db");
    const [a, b] = [await open(file), await open(file)];
    let largest = 0;
    for (let i = 0; i < 800; i++) {
      await Promise.all([
        a.commitDecision(makeDecision(`a_${i}`, { callId: `a-${i}` })),
        b.commitDecision(makeDecision(`b_${i}`, { callId: `b-${i}` })),
      ]);
      if (i % 50 === 0) largest = Math.max(largest, size(`${file}-wal`));
    }
    // Each connection counts only its own units (and one of two checkpoints asked together is busy).
    expect(largest).toBeLessThan(2 * WAL_BOUND_BYTES);
    expect(warnings).toEqual([]);
    expect(count(file)).toBe(3200);
    await a.close();
    await b.close();
    // The last connection to close empties the WAL into the database and removes it.
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(count(file)).toBe(3200);
  }, 120_000);

  it("stops its thread at close: a process that started one exits by itself", async () => {
    const dir = dirs.make();
    const dist = new URL("../../dist/store/index.js", import.meta.url).href;
    expect(existsSync(new URL(dist)), "dist/ is missing: `npm test` builds it first").toBe(true);
    // Enough units to start the thread; then close, and nothing else keeps the process alive.
    const script = `
      import { openSqliteStore } from ${JSON.stringify(dist)};
      import { statSync } from "node:fs";
      const file = ${JSON.stringify(join(dir, "charter.db"))};
      const store = await openSqliteStore({ file });
      const base = ${JSON.stringify(makeDecision("d"))};
      const before = statSync(file).size;
      for (let i = 0; i < 600; i++) await store.commitDecision({ ...base, decisionId: "d" + i, callId: "c" + i });
      await new Promise((r) => setTimeout(r, 300));
      const after = statSync(file).size;
      await store.close();
      console.log(JSON.stringify({ before, after }));
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve(null);
      }, 20_000);
      child.on("exit", (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    expect(code, `the child did not exit by itself: ${err}`).toBe(0);
    expect(err).not.toContain("checkpointer thread failed");
    const { before, after } = JSON.parse(out) as { before: number; after: number };
    // With SQLite's automatic checkpoint off, only the thread moved pages into the database file.
    expect(after).toBeGreaterThan(before);
  }, 30_000);

  it("reports a thread that cannot run, so that SQLite's own checkpoint can be turned back on", async () => {
    const told: string[] = [];
    const failed = new Promise<Error>((resolve) => {
      const checkpointer = startWalCheckpointer(join(dirs.make(), "missing.db"), {
        everyUnits: 1,
        onFailure: resolve,
        warn: (m) => told.push(m),
      });
      checkpointer.wrote(1);
    });
    expect((await failed).message).toContain("SQLITE_CANTOPEN");
    expect(told.join("\n")).toContain("SQLite checkpoints on the serving connection instead");
  });

  it("warns when a reader keeps the WAL from emptying, and empties it once the reader is done", async () => {
    const file = join(dirs.make(), "t.db");
    const db = new Database(file);
    const reader = new Database(file);
    const told: string[] = [];
    const checkpointer = startWalCheckpointer(file, {
      everyUnits: 1,
      warnPages: 50,
      onFailure: (err) => told.push(err.message),
      warn: (m) => told.push(m),
    });
    try {
      db.pragma("journal_mode = WAL");
      db.pragma("wal_autocheckpoint = 0");
      db.exec("CREATE TABLE t (v BLOB)");
      const insert = db.prepare<[Buffer], never>("INSERT INTO t (v) VALUES (?)");
      insert.run(Buffer.alloc(4000));
      // A read transaction on the first snapshot: no checkpoint may move what came after it.
      reader.exec("BEGIN");
      reader.prepare("SELECT count(*) FROM t").get();
      for (let i = 0; i < 100; i++) insert.run(Buffer.alloc(4000));
      const checkpointed = async () => {
        const before = told.length;
        checkpointer.wrote(1);
        while (told.length === before && size(file) < 100 * 4000)
          await new Promise((r) => setTimeout(r, 10));
      };
      await checkpointed();
      expect(told.join("\n")).toMatch(
        /the WAL holds \d+ pages that a checkpoint could not all move/,
      );
      reader.exec("COMMIT");
      await checkpointed();
      expect(size(file)).toBeGreaterThan(100 * 4000);
      expect(db.prepare("SELECT count(*) FROM t").pluck().get()).toBe(101);
    } finally {
      await checkpointer.close();
      reader.close();
      db.close();
    }
  });

  it("is not started for :memory:, which keeps working", async () => {
    const mem = await open(":memory:");
    for (let i = 0; i < 300; i++)
      await mem.commitDecision(makeDecision(`m_${i}`, { callId: `m-${i}` }));
    expect(await mem.getDecision("m_299")).toBeDefined();
  });
});

describe("a write outside the group commit", () => {
  it("waits in SQLite's busy handler for another connection's lock, up to the busy timeout", async () => {
    const file = join(dirs.make(), "charter.db");
    const store = await open(file, { busyTimeoutMs: 150 });
    const other = new Database(file);
    try {
      other.exec("BEGIN IMMEDIATE");
      const started = performance.now();
      await expect(store.createApiKey(makeApiKey("k"))).rejects.toMatchObject({
        code: "UNAVAILABLE",
        cause: { code: "SQLITE_BUSY" },
      });
      expect(performance.now() - started).toBeGreaterThanOrEqual(100);
      other.exec("ROLLBACK");
    } finally {
      other.close();
    }
    await store.createApiKey(makeApiKey("k"));
    expect(await store.listApiKeys()).toHaveLength(1);
  });
});
