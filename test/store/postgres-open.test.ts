import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore, openStore, type Store } from "../../src/store/index.js";
import { POSTGRES_MIGRATIONS } from "../../src/store/postgres/migrations.js";
import { SQLITE_MIGRATIONS } from "../../src/store/sqlite/migrations.js";
import {
  admin,
  describePostgres,
  POSTGRES_URL,
  testSchema,
  type TestSchema,
} from "../support/postgres.js";
import { closedPort } from "../support/ports.js";
import { expectStoreError } from "./contract.js";
import { makeDecision, makeGrant } from "./fixtures.js";

describe("PostgreSQL migrations", () => {
  it("have the versions and names of the SQLite migrations, so one history describes both", () => {
    const history = (list: typeof SQLITE_MIGRATIONS) => list.map((m) => `${m.version} ${m.name}`);
    expect(history(POSTGRES_MIGRATIONS)).toEqual(history(SQLITE_MIGRATIONS));
  });
});

describe("openPostgresStore() refusals that need no server", () => {
  it.each([
    ["postgres://charter:s3cr3t-pw@[bad/charter", /not a valid URL/],
    [
      "postgres://charter:s3cr3t-pw@db/charter?schema=Bad-Name",
      /schema "Bad-Name" is not a lower-case identifier/,
    ],
    ["postgres://charter:s3cr3t-pw@db/charter?schema=x;drop", /is not a lower-case identifier/],
  ])("refuses %s as UNAVAILABLE without echoing the password", async (url, message) => {
    const err = await expectStoreError(openPostgresStore({ url }), "UNAVAILABLE");
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain("s3cr3t-pw");
  });

  it("fails UNAVAILABLE at once when nothing listens, naming the database without its password", async () => {
    const port = await closedPort();
    for (const url of [
      `postgres://charter:s3cr3t-pw@127.0.0.1:${port}/charter`,
      `POSTGRESQL://charter:s3cr3t-pw@127.0.0.1:${port}/charter`,
    ]) {
      const err = await expectStoreError(
        openStore({ dataDir: "/nonexistent", url }),
        "UNAVAILABLE",
      );
      expect(err.message).toContain(`charter@127.0.0.1:${port}/charter (schema public)`);
      expect(err.message).toMatch(/ECONNREFUSED/);
      expect(err.message).not.toContain("s3cr3t-pw");
    }
  });
});

describePostgres("openPostgresStore() on the test server", () => {
  const schemas: TestSchema[] = [];
  const stores: Store[] = [];
  const fresh = (label: string) => {
    const s = testSchema(label);
    schemas.push(s);
    return s;
  };
  const open = async (options: Parameters<typeof openPostgresStore>[0]) => {
    const store = await openPostgresStore(options);
    stores.push(store);
    return store;
  };
  afterAll(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const s of schemas.splice(0)) await s.drop();
  });

  it("is what openStore opens for a postgres:// url, in the url's schema, created when missing", async () => {
    const schema = fresh("open");
    const store = await openStore({ dataDir: "/nonexistent", url: schema.url, now: () => 111 });
    stores.push(store);
    await store.putGrant(makeGrant("g"));
    const rows = await admin((c) =>
      c.query<{ id: string }>(`SELECT id FROM ${schema.name}.grants`),
    );
    expect(rows.rows).toEqual([{ id: "g" }]);
    const history = await admin((c) =>
      c.query(
        `SELECT version, name, applied_at FROM ${schema.name}.schema_migrations ORDER BY version`,
      ),
    );
    expect(history.rows).toEqual(
      POSTGRES_MIGRATIONS.map((m) => ({ version: m.version, name: m.name, applied_at: "111" })),
    );
  });

  it("applies each migration once when many replicas open a fresh schema together", async () => {
    const schema = fresh("together");
    const opened = await Promise.all(Array.from({ length: 6 }, () => open({ url: schema.url })));
    expect(opened).toHaveLength(6);
    const history = await admin((c) =>
      c.query(`SELECT version FROM ${schema.name}.schema_migrations ORDER BY version`),
    );
    expect(history.rows.map((r: { version: number }) => r.version)).toEqual(
      POSTGRES_MIGRATIONS.map((m) => m.version),
    );
  });

  it("refuses a schema from a newer Charter, and one whose history diverges, as CORRUPT", async () => {
    const newer = fresh("newer");
    await (await openPostgresStore({ url: newer.url })).close();
    const latest = POSTGRES_MIGRATIONS.length;
    await admin((c) =>
      c.query(
        `INSERT INTO ${newer.name}.schema_migrations VALUES (${latest + 1}, 'from-the-future', 1)`,
      ),
    );
    expect(
      (await expectStoreError(openPostgresStore({ url: newer.url }), "CORRUPT")).message,
    ).toContain(`schema version ${latest + 1} is newer than this Charter (${latest})`);

    const diverged = fresh("diverged");
    await (await openPostgresStore({ url: diverged.url })).close();
    await admin((c) =>
      c.query(`UPDATE ${diverged.name}.schema_migrations SET name = 'other' WHERE version = 2`),
    );
    expect(
      (await expectStoreError(openPostgresStore({ url: diverged.url }), "CORRUPT")).message,
    ).toMatch(/version 2 is "other", this Charter expects "decisions"/);
  });

  it("fails UNAVAILABLE for a database that does not exist, without the password", async () => {
    const url = new URL(POSTGRES_URL);
    url.password = "s3cr3t-pw";
    url.pathname = "/charter_no_such_database";
    const err = await expectStoreError(openPostgresStore({ url: url.href }), "UNAVAILABLE");
    expect(err.message).toMatch(/charter_no_such_database/);
    expect(err.message).not.toContain("s3cr3t-pw");
  });

  describe("translating server errors", () => {
    let schema: TestSchema;
    beforeAll(async () => {
      schema = fresh("errors");
      await (await openPostgresStore({ url: schema.url })).close();
    });

    it("a statement that waits past the statement timeout is UNAVAILABLE, and the store answers again afterwards", async () => {
      const store = await open({ url: schema.url, statementTimeoutMs: 300 });
      await admin(async (c) => {
        await c.query("BEGIN");
        await c.query(`LOCK TABLE ${schema.name}.grants IN ACCESS EXCLUSIVE MODE`);
        const started = Date.now();
        const err = await expectStoreError(store.getGrant("g"), "UNAVAILABLE");
        expect(err.message).toMatch(
          /could not read grant g: canceling statement due to statement timeout/,
        );
        expect(Date.now() - started).toBeLessThan(3000);
        await c.query("ROLLBACK");
      });
      expect(await store.getGrant("g")).toBeUndefined();
    });

    it("a connection the server terminates (admin shutdown) is UNAVAILABLE at most once, then the pool reconnects", async () => {
      const name = `charter-test-${process.pid}-terminate`;
      const store = await open({ url: schema.url, applicationName: name, poolSize: 1 });
      await store.commitDecision(makeDecision("dec_before"));
      const killed = await admin((c) =>
        c.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
          [name],
        ),
      );
      expect(killed.rowCount).toBe(1);
      const outcomes: string[] = [];
      for (let i = 0; i < 3; i++) {
        outcomes.push(
          await store.getDecision("dec_before").then(
            (d) => (d === undefined ? "missing" : "ok"),
            (err: unknown) => (err as { code: string }).code,
          ),
        );
      }
      expect(outcomes.at(-1)).toBe("ok");
      expect(outcomes.filter((o) => o !== "ok").every((o) => o === "UNAVAILABLE")).toBe(true);
    });

    it("concurrent commits of one decision from two replicas all succeed: serialization failures are retried", async () => {
      const [a, b] = [await open({ url: schema.url }), await open({ url: schema.url })];
      const record = makeDecision("dec_race");
      const commits = Array.from({ length: 24 }, (_, i) =>
        (i % 2 === 0 ? a : b).commitDecision(record),
      );
      await expect(Promise.all(commits)).resolves.toHaveLength(24);
      expect(await b.getDecision("dec_race")).toStrictEqual(record);
    });

    it("concurrent revocations of overlapping subtrees all succeed with the first time and reason kept", async () => {
      const [a, b] = [await open({ url: schema.url }), await open({ url: schema.url })];
      const root = makeGrant("rv-root");
      const child = makeGrant("rv-child", root);
      const leaf = makeGrant("rv-leaf", child);
      for (const g of [root, child, leaf]) await a.putGrant(g);
      const revocations = Array.from({ length: 16 }, (_, i) =>
        (i % 2 === 0 ? a : b).revokeGrant(i % 3 === 0 ? "rv-root" : "rv-child", `r${i}`, 1000 + i),
      );
      await expect(Promise.all(revocations)).resolves.toHaveLength(16);
      const leafState = await b.getGrant("rv-leaf");
      expect(leafState?.revokedAt).toBeDefined();
      expect(await b.anyRevoked(["rv-root"])).toBe(true);
    });
  });
});
