import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore, StoreError } from "../../src/store/index.js";
import { EPOCH_READ_SQL, sqliteRevocationCheck } from "../../src/store/sqlite/revocation-check.js";
import { expectStoreError, rejection } from "./contract-assert.js";
import { makeGrant } from "./fixtures.js";
import { seededRevocationStore } from "./revocation-seed.js";
import { tempDirs } from "./temp-dirs.js";

const dirs = tempDirs("charter-revocation-batch");
const opened: { close(): unknown }[] = [];

afterEach(async () => {
  for (const s of opened.splice(0).reverse()) await s.close();
  dirs.removeAll();
});

const seeded = () => seededRevocationStore(dirs.make(), (store) => opened.push(store));

/** A plain connection on the file (another process's, as far as the store can tell). */
function connect(file: string, options?: Database.Options): Database.Database {
  const db = new Database(file, options);
  opened.push(db);
  return db;
}

/** The revocation check over a connection of its own whose statements are traced: `sql` lists every one executed, in order. */
function tracedCheck(file: string) {
  const sql: string[] = [];
  const db = connect(file, { verbose: (s) => sql.push(String(s)) });
  const check = sqliteRevocationCheck(db);
  const epochReads = () => sql.filter((s) => s === EPOCH_READ_SQL).length;
  const queries = () => sql.filter((s) => s.includes("json_each")).length;
  return { db, check, sql, epochReads, queries };
}

/** Resolves on a later turn of the event loop than every immediate scheduled before it. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const revokeRoot = (db: Database.Database) =>
  db
    .prepare("UPDATE grants SET revoked_at = 1, revoked_reason = 'by hand' WHERE id = 'g-root'")
    .run();

describe("anyRevoked() on SQLite, one epoch read per turn", () => {
  it("sees a revocation committed after the check was asked and before it was read", async () => {
    const { file, store, ids } = await seeded();
    const asked = [
      store.anyRevoked(ids),
      store.anyRevoked(["g-root"]),
      store.anyRevoked(["g-child"]),
    ];
    revokeRoot(connect(file));
    expect(await Promise.all(asked)).toEqual([true, true, false]);
  });

  it("reads the epoch once for the checks asked in one turn, and once more for the next turn's", async () => {
    const { file, ids } = await seeded();
    const { check, epochReads, queries } = tracedCheck(file);
    const first = Array.from({ length: 32 }, () => check(ids));
    expect(epochReads()).toBe(0);
    expect(await Promise.all(first)).toEqual(Array(32).fill(false));
    expect(epochReads()).toBe(1);
    // The first check's query made the ids known under this epoch; the other 31 needed none.
    expect(queries()).toBe(1);
    const second = [check(ids), check(["g-root"])];
    expect(await Promise.all(second)).toEqual([false, false]);
    expect([epochReads(), queries()]).toEqual([2, 1]);
  });

  it("makes a check asked once the read has begun wait for the next read", async () => {
    const { file, ids } = await seeded();
    const events: string[] = [];
    let late: Promise<boolean> | undefined;
    const db = connect(file, {
      verbose: (s) => {
        if (s !== EPOCH_READ_SQL) return;
        events.push("read");
        // Asked while the first read is beginning: it must not be answered by it.
        late ??= answered("late", check(ids));
      },
    });
    const check = sqliteRevocationCheck(db);
    const answered = async (name: string, p: Promise<boolean>) => {
      const revoked = await p;
      events.push(`${name} answered`);
      return revoked;
    };
    const early = answered("early", check(ids));
    expect(await early).toBe(false);
    expect(await late).toBe(false);
    expect(events).toEqual(["read", "early answered", "read", "late answered"]);
  });

  it("makes a check asked right after an answer, in the same turn, read again and see a revocation committed just before", async () => {
    const { file, store, ids } = await seeded();
    const raw = connect(file);
    const after = store.anyRevoked(ids).then((first) => {
      revokeRoot(raw);
      return [first, store.anyRevoked(ids)] as const;
    });
    const [first, second] = await after;
    expect(first).toBe(false);
    expect(await second).toBe(true);
  });

  it("answers each check of a turn from the one read: known ids without a query, unknown ids by one", async () => {
    const { file, ids } = await seeded();
    const { check, queries } = tracedCheck(file);
    expect(
      await Promise.all([check(ids), check(["g-late"]), check(ids), check(["g-late", "g-root"])]),
    ).toEqual([false, false, false, false]);
    // ids (first), then g-late; the last two were known by then.
    expect(queries()).toBe(2);
  });
});

describe("anyRevoked() on SQLite: errors and close", () => {
  it("fails every check that waited for a read of a missing epoch (CORRUPT), and reads afresh on the next turn", async () => {
    const { file, store, ids } = await seeded();
    const raw = connect(file);
    raw.prepare("DELETE FROM revocation_epoch").run();
    const asked = [
      store.anyRevoked(ids),
      store.anyRevoked(["g-root"]),
      store.anyRevoked(["g-other"]),
    ];
    for (const p of asked) await expectStoreError(p, "CORRUPT");
    raw.prepare("INSERT INTO revocation_epoch (id, epoch) VALUES (1, 99)").run();
    expect(await store.anyRevoked(ids)).toBe(false);
  });

  it("fails every check that waited for a read SQLite refused, translated (UNAVAILABLE)", async () => {
    const { file, store, ids } = await seeded();
    connect(file).exec("DROP TABLE revocation_epoch");
    const asked = [store.anyRevoked(ids), store.anyRevoked(["g-root"])];
    for (const p of asked) {
      const err = await expectStoreError(p, "UNAVAILABLE");
      expect(err.message).toBe(
        "sqlite store could not check revocations: no such table: revocation_epoch",
      );
    }
  });

  it("rejects the checks waiting when the connection closed, without touching it", async () => {
    const { file, ids } = await seeded();
    const { db, check, sql } = tracedCheck(file);
    const asked = [check(ids), check(["g-root"])];
    db.close();
    for (const p of asked) {
      const err = await rejection(p);
      expect(err).toBeInstanceOf(StoreError);
      expect(err).toMatchObject({
        code: "UNAVAILABLE",
        message:
          "sqlite store could not check revocations: the store closed before the check was read",
      });
    }
    expect(sql).toEqual([]);
  });

  it.each([":memory:", "on disk"])(
    "settles the checks waiting when the store (%s) is closed",
    async (where) => {
      const file = where === ":memory:" ? where : join(dirs.make(), "charter.db");
      const store = await openSqliteStore({ file });
      await store.putGrant(makeGrant("g-root"));
      const asked = [store.anyRevoked(["g-root"]), store.anyRevoked(["g-other"])];
      await store.close();
      const settled = await Promise.allSettled(asked);
      for (const s of settled) {
        if (s.status === "fulfilled") expect(s.value).toBe(false);
        else expect(s.reason).toMatchObject({ name: "StoreError", code: "UNAVAILABLE" });
      }
      // Once the scheduled read has run, nothing is left waiting, and a later check fails at the guard.
      await nextTurn();
      await expectStoreError(store.anyRevoked(["g-root"]), "UNAVAILABLE");
    },
  );

  it("keeps a process that awaits a check alive until it is answered", async () => {
    const { file } = await seeded();
    const dist = new URL("../../dist/store/index.js", import.meta.url).href;
    expect(existsSync(new URL(dist)), "dist/ is missing: `npm test` builds it first").toBe(true);
    // Once what the open left in flight is done (the pause), nothing else keeps this process alive.
    const script = `
      import { openSqliteStore } from ${JSON.stringify(dist)};
      const store = await openSqliteStore({ file: ${JSON.stringify(file)} });
      await new Promise((resolve) => setTimeout(resolve, 50));
      console.log(JSON.stringify(await store.anyRevoked(["g-root"])));
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect({ code, out: out.trim() }).toEqual({ code: 0, out: "false" });
  }, 20_000);
});
