import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { TaskGrant } from "../../src/core/grant.js";
import { grantToJson } from "../../src/store/grant-json.js";
import { applySqliteMigrations } from "../../src/store/sqlite/migrate.js";
import { SQLITE_MIGRATIONS } from "../../src/store/sqlite/migrations.js";
import { openSqliteStore, type Store } from "../../src/store/index.js";
import { expectStoreError } from "./contract.js";
import { makeDecision, makeGrant, makeKey } from "./fixtures.js";
import { tempDirs } from "./temp-dirs.js";

const dirs = tempDirs("charter-sqlite");
const stores: Store[] = [];

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  dirs.removeAll();
});

async function open(
  file: string,
  options: { now?: () => number; busyTimeoutMs?: number } = {},
): Promise<Store> {
  const store = await openSqliteStore({ file, ...options });
  stores.push(store);
  return store;
}

/** Runs `fn` on a second, plain connection to the file, as another process would. */
function withRaw<T>(file: string, fn: (db: Database.Database) => T): T {
  const db = new Database(file);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const LATEST = SQLITE_MIGRATIONS.length;

describe("openSqliteStore()", () => {
  it("creates missing parent directories and keeps grants, revocations and keys across reopening", async () => {
    const file = join(dirs.make(), "data", "nested", "charter.db");
    const root = makeGrant("root");
    const child = makeGrant("child", root);
    const first = await open(file);
    await first.putGrant(root);
    await first.putGrant(child);
    await first.revokeGrant("child", "done", 1_750_000_100);
    await first.insertKey(makeKey("k1", 100));
    await first.retireKey("k1", 200);
    await first.close();

    const second = await open(file);
    expect(await second.getGrant("root")).toStrictEqual({ grant: root });
    expect(await second.getGrant("child")).toStrictEqual({
      grant: child,
      revokedAt: 1_750_000_100,
      revokedReason: "done",
    });
    expect(await second.listKeys()).toStrictEqual([makeKey("k1", 100, 200)]);
    expect(await second.anyRevoked(["root", "child"])).toBe(true);
  });

  it("puts the database in WAL mode", async () => {
    const file = join(dirs.make(), "charter.db");
    await open(file);
    expect(withRaw(file, (db) => db.pragma("journal_mode", { simple: true }))).toBe("wal");
  });

  it("records each migration once and does not re-apply it on reopening", async () => {
    const file = join(dirs.make(), "charter.db");
    await (await open(file, { now: () => 111 })).close();
    const recorded = SQLITE_MIGRATIONS.map((m) => ({
      version: m.version,
      name: m.name,
      applied_at: 111,
    }));
    const history = (): unknown =>
      withRaw(file, (db) => db.prepare("SELECT * FROM schema_migrations ORDER BY version").all());
    expect(history()).toEqual(recorded);
    expect(recorded.map((r) => r.version)).toEqual([...Array(LATEST).keys()].map((i) => i + 1));

    const again = await open(file, { now: () => 222 });
    await again.putGrant(makeGrant("g"));
    expect(history()).toEqual(recorded);
  });

  it("refuses a database whose schema is newer than this code, leaving it untouched", async () => {
    const file = join(dirs.make(), "charter.db");
    const store = await open(file);
    await store.putGrant(makeGrant("g"));
    await store.close();
    withRaw(file, (db) =>
      db.prepare("INSERT INTO schema_migrations VALUES (?, 'from-the-future', 1)").run(LATEST + 1),
    );

    const err = await expectStoreError(openSqliteStore({ file }), "CORRUPT");
    expect(err.message).toContain(
      `database schema version ${LATEST + 1} is newer than this Charter (${LATEST})`,
    );
    expect(err.message).toContain(file);
    expect(withRaw(file, (db) => db.prepare("SELECT count(*) FROM grants").pluck().get())).toBe(1);
  });

  it("brings a database of schema version 1 up to date, keeping its grants and keys, and records decisions in it", async () => {
    const file = join(dirs.make(), "charter.db");
    withRaw(file, (db) => applySqliteMigrations(db, SQLITE_MIGRATIONS.slice(0, 1), () => 100));
    withRaw(file, (db) => {
      db.prepare(
        "INSERT INTO grants (id, root_id, subject, owner, profile, issued_at, expires_at, grant_json) VALUES ('g', 'g', 's', 'o', 'p', 1, 2, ?)",
      ).run(grantToJson(makeGrant("g")));
      db.prepare(
        "INSERT INTO keys (kid, alg, public_jwk, private_jwk, created_at) VALUES ('k1', 'EdDSA', ?, ?, 100)",
      ).run(makeKey("k1", 100).publicJwk, makeKey("k1", 100).privateJwk);
    });
    const store = await open(file, { now: () => 200 });
    expect(await store.getGrant("g")).toStrictEqual({ grant: makeGrant("g") });
    expect(await store.listKeys()).toStrictEqual([makeKey("k1", 100)]);
    await store.commitDecision(makeDecision("dec_1"));
    expect(await store.getDecision("dec_1")).toStrictEqual(makeDecision("dec_1"));
    const history = withRaw(file, (db) =>
      db.prepare("SELECT version, applied_at FROM schema_migrations ORDER BY version").all(),
    );
    expect(history).toEqual([
      { version: 1, applied_at: 100 },
      ...SQLITE_MIGRATIONS.slice(1).map((m) => ({ version: m.version, applied_at: 200 })),
    ]);
  });

  it("refuses a database whose recorded history diverges from this code's", async () => {
    const file = join(dirs.make(), "charter.db");
    await (await open(file)).close();
    withRaw(file, (db) =>
      db.prepare("UPDATE schema_migrations SET name = 'something-else' WHERE version = 1").run(),
    );
    const err = await expectStoreError(openSqliteStore({ file }), "CORRUPT");
    expect(err.message).toContain("something-else");
  });

  it("refuses a file that is not a SQLite database as CORRUPT", async () => {
    const file = join(dirs.make(), "charter.db");
    writeFileSync(file, "this is not a database\n".repeat(400));
    await expectStoreError(openSqliteStore({ file }), "CORRUPT");
  });

  it("fails UNAVAILABLE when the file cannot be created", async () => {
    const dir = dirs.make();
    writeFileSync(join(dir, "a-file"), "");
    await expectStoreError(
      openSqliteStore({ file: join(dir, "a-file", "charter.db") }),
      "UNAVAILABLE",
    );
    mkdirSync(join(dir, "charter.db"));
    await expectStoreError(openSqliteStore({ file: join(dir, "charter.db") }), "UNAVAILABLE");
  });
});

describe("sqlite store at run time", () => {
  const damaged: [string, (id: string) => string][] = [
    ["text that is not JSON", () => "{not json"],
    ["JSON that is not an object", () => "[]"],
    ["a grant with another id", () => grantToJson(makeGrant("other"))],
    ["a grant without caveats", (id) => JSON.stringify({ ...makeGrant(id), caveats: undefined })],
    ["a grant with a bad mode", (id) => grantToJson({ ...makeGrant(id), mode: "loud" as "live" })],
    [
      "a grant with an unknown member",
      (id) => grantToJson({ ...makeGrant(id), maxCost: 5 } as TaskGrant),
    ],
    [
      "a grant whose allowed and denied lists overlap",
      (id) => grantToJson({ ...makeGrant(id), denied: ["email.delete", "email.send"] }),
    ],
    [
      "a grant with an unsorted allowed list",
      (id) => grantToJson({ ...makeGrant(id), allowed: ["email.send", "email.read"] }),
    ],
  ];

  it.each(damaged)("reports a grant row holding %s as CORRUPT", async (_what, json) => {
    const file = join(dirs.make(), "charter.db");
    const store = await open(file);
    await store.putGrant(makeGrant("g"));
    withRaw(file, (db) =>
      db.prepare("UPDATE grants SET grant_json = ? WHERE id = 'g'").run(json("g")),
    );
    const err = await expectStoreError(store.getGrant("g"), "CORRUPT");
    expect(err.message).toContain("grant g");
  });

  const damagedDecisions: [string, string, unknown][] = [
    ["an unknown decision", "decision", "maybe"],
    ["an unknown reason code", "reason_code", "BECAUSE"],
    ["a time that is not an integer", "decided_at", "yesterday"],
  ];

  it.each(damagedDecisions)(
    "reports a decision row holding %s as CORRUPT",
    async (_what, column, value) => {
      const file = join(dirs.make(), "charter.db");
      const store = await open(file);
      await store.commitDecision(
        makeDecision("dec_1", { decision: "deny", reasonCode: "NOT_GRANTED" }),
      );
      withRaw(file, (db) =>
        db.prepare(`UPDATE decisions SET ${column} = ? WHERE decision_id = 'dec_1'`).run(value),
      );
      const err = await expectStoreError(store.getDecision("dec_1"), "CORRUPT");
      expect(err.message).toContain("decision dec_1");
    },
  );

  it("commits nothing of a decision whose id is recorded with other content", async () => {
    const file = join(dirs.make(), "charter.db");
    const store = await open(file);
    await store.commitDecision(makeDecision("dec_1"));
    await expectStoreError(
      store.commitDecision(
        makeDecision("dec_1", { decision: "deny", reasonCode: "EXPLICIT_DENY" }),
      ),
      "CONFLICT",
    );
    expect(withRaw(file, (db) => db.prepare("SELECT count(*) FROM decisions").pluck().get())).toBe(
      1,
    );
  });

  it("fails UNAVAILABLE when another connection holds the write lock, and recovers after", async () => {
    const file = join(dirs.make(), "charter.db");
    const store = await open(file, { busyTimeoutMs: 50 });
    await store.putGrant(makeGrant("before"));
    const other = new Database(file);
    try {
      other.exec("BEGIN IMMEDIATE");
      const err = await expectStoreError(store.putGrant(makeGrant("during")), "UNAVAILABLE");
      expect(err.cause).toMatchObject({ code: "SQLITE_BUSY" });
      await expectStoreError(store.revokeGrant("before", "x", 1), "UNAVAILABLE");
      await expectStoreError(store.commitDecision(makeDecision("dec_during")), "UNAVAILABLE");
      expect(await store.getGrant("before")).toStrictEqual({ grant: makeGrant("before") });
      other.exec("ROLLBACK");
    } finally {
      other.close();
    }
    await store.putGrant(makeGrant("after"));
    expect(await store.getDecision("dec_during")).toBeUndefined();
    expect(await store.anyRevoked(["before"])).toBe(false);
    expect(await store.getGrant("after")).toBeDefined();
  });
});
