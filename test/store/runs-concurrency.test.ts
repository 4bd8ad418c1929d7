import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore, openSqliteStore } from "../../src/store/index.js";
import type { Store } from "../../src/store/port.js";
import type { RunQuery } from "../../src/store/port-runs.js";
import { describePostgres, testSchema } from "../support/postgres.js";
import { ISSUED_AT, makeDecision } from "./fixtures.js";
import { tempDirs } from "./temp-dirs.js";

// A window's bound holds under concurrency: 200 calls race for room for 50, each deciding on a
// fresh read and deciding again when the commit answers run_changed (as the shell does). Exactly
// 50 allows commit, on one SQLite store, on two stores on one file, and on two PostgreSQL
// replicas on one schema.

const T = ISSUED_AT + 10;
const KEY = "cap|grant:g-root";
const CALLS = 200;
const ROOM = 50;

type Bound = { readonly maxSum: number } | { readonly maxCalls: number };

/** One call: decide on a fresh read (deny when the window has no room), commit, and again on run_changed. */
async function call(store: Store, i: number, bound: Bound): Promise<string> {
  const query: RunQuery = {
    labelsFrom: [],
    after: [],
    windows: [{ key: KEY, seconds: 3600 }],
    now: T,
  };
  for (let attempt = 0; attempt < 1000; attempt++) {
    const usage = (await store.readRun(query)).windows[KEY] ?? { calls: 0, sum: 0 };
    const full =
      "maxSum" in bound ? usage.sum + 1 > bound.maxSum : usage.calls + 1 > bound.maxCalls;
    if (full) return "denied";
    const outcome = await store.commitDecision(makeDecision(`dec_${i}_${attempt}`), {
      run: {
        query,
        judged: { labels: [], last: {} },
        labels: [],
        writeTo: [],
        windows: [{ key: KEY, seconds: 3600, amount: 1, ...bound }],
        expiresAt: T + 3600,
      },
    });
    if (outcome.kind !== "run_changed") return outcome.kind;
  }
  throw new Error(`call ${i} was answered run_changed 1000 times`);
}

async function race(stores: readonly Store[], bound: Bound): Promise<void> {
  const outcomes = await Promise.all(
    Array.from({ length: CALLS }, (_, i) => call(stores[i % stores.length] as Store, i, bound)),
  );
  expect(outcomes.filter((o) => o === "committed")).toHaveLength(ROOM);
  expect(outcomes.filter((o) => o === "denied")).toHaveLength(CALLS - ROOM);
  for (const store of stores) {
    const read = await store.readRun({
      labelsFrom: [],
      after: [],
      windows: [{ key: KEY, seconds: 3600 }],
      now: T,
    });
    expect(read.windows[KEY]).toEqual({ calls: ROOM, sum: ROOM });
  }
}

const BOUNDS: [string, Bound][] = [
  ["maxSum", { maxSum: ROOM }],
  ["maxCalls", { maxCalls: ROOM }],
];

describe("a window's bound under concurrency: SQLite", () => {
  const dirs = tempDirs("charter-runs-race");
  let stores: Store[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    dirs.removeAll();
  });

  it.each(BOUNDS)("one store: a %s of 50 lets exactly 50 allows commit", async (_name, bound) => {
    stores = [await openSqliteStore({ file: join(dirs.make(), "charter.db") })];
    await race(stores, bound);
  });

  it.each(BOUNDS)(
    "two stores on one file: a %s of 50 lets exactly 50 allows commit",
    async (_name, bound) => {
      const file = join(dirs.make(), "charter.db");
      stores = [await openSqliteStore({ file }), await openSqliteStore({ file })];
      await race(stores, bound);
    },
  );
});

describePostgres("a window's bound under concurrency: PostgreSQL", () => {
  const schema = testSchema("runs_race");
  let stores: Store[] = [];
  beforeAll(() => schema.create());
  afterAll(() => schema.drop());
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    await schema.truncate();
  });

  it.each(BOUNDS)(
    "two replicas on one schema: a %s of 50 lets exactly 50 allows commit",
    async (_name, bound) => {
      stores = [
        await openPostgresStore({ url: schema.url }),
        await openPostgresStore({ url: schema.url }),
      ];
      await race(stores, bound);
    },
  );
});
