import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore, openSqliteStore } from "../../src/store/index.js";
import { DECISION_COLUMNS, decisionRow } from "../../src/store/decision-row.js";
import { applyPostgresMigrations } from "../../src/store/postgres/migrate.js";
import { POSTGRES_MIGRATIONS } from "../../src/store/postgres/migrations.js";
import { applySqliteMigrations } from "../../src/store/sqlite/migrate.js";
import { SQLITE_MIGRATIONS } from "../../src/store/sqlite/migrations.js";
import { describePostgres, POSTGRES_URL, testSchema } from "../support/postgres.js";
import { makeDecision } from "./fixtures.js";
import { tempDirs } from "./temp-dirs.js";

// A decision recorded before version 8 (`runs`) reads back as it was: no run labels, no rule.

const BEFORE_RUNS = 7;
const OLD_COLUMNS = DECISION_COLUMNS.filter(
  (c) => c !== "run_labels" && c !== "rule_id" && !c.startsWith("shadow_"),
);
const old = makeDecision("dec_old", { runId: "run-1", stepKey: "s", caller: "gateway" });
const oldValues = () => {
  const row = decisionRow(old);
  return OLD_COLUMNS.map((c) => row[c]);
};

describe("a SQLite store upgraded to runs", () => {
  const dirs = tempDirs("charter-runs-upgrade");
  afterEach(() => dirs.removeAll());

  it("reads a decision recorded before the upgrade as it was, and runs an empty run", async () => {
    const file = join(dirs.make(), "charter.db");
    const db = new Database(file);
    applySqliteMigrations(db, SQLITE_MIGRATIONS.slice(0, BEFORE_RUNS), () => 1);
    db.prepare(
      `INSERT INTO decisions (${OLD_COLUMNS.join(", ")}) VALUES (${OLD_COLUMNS.map(() => "?").join(", ")})`,
    ).run(...oldValues());
    db.close();
    const store = await openSqliteStore({ file });
    try {
      expect(await store.getDecision("dec_old")).toStrictEqual(old);
      expect(await store.commitDecision(old)).toEqual({ kind: "committed" });
      expect(
        await store.readRun({
          labelsFrom: [{ grantId: "g-root" }],
          after: [],
          windows: [],
          now: 1,
        }),
      ).toEqual({ labels: [], calls: 0, last: {}, windows: {} });
    } finally {
      await store.close();
    }
  });
});

describePostgres("a PostgreSQL store upgraded to runs", () => {
  const schema = testSchema("runs_upgrade");
  beforeAll(() => schema.create());
  afterAll(() => schema.drop());

  it("reads a decision recorded before the upgrade as it was", async () => {
    const pool = new pg.Pool({
      connectionString: POSTGRES_URL,
      options: `-c search_path=${schema.name}`,
    });
    try {
      await applyPostgresMigrations(
        pool,
        schema.name,
        POSTGRES_MIGRATIONS.slice(0, BEFORE_RUNS),
        () => 1,
      );
      await pool.query(
        `INSERT INTO decisions (${OLD_COLUMNS.join(", ")}) VALUES (${OLD_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})`,
        oldValues(),
      );
    } finally {
      await pool.end();
    }
    const store = await openPostgresStore({ url: schema.url });
    try {
      expect(await store.getDecision("dec_old")).toStrictEqual(old);
      expect(await store.commitDecision(old)).toEqual({ kind: "committed" });
    } finally {
      await store.close();
    }
  });
});
