/**
 * The SQLite group commit's work per decision, on a database on disk: each iteration commits 32
 * allows with a budget charge (`maxCalls` and `maxCallsPerAction`, as a demo grant has) as one
 * `Promise.all`, so they share one group. The figure is the main thread's busy time per decision
 * (the event loop's active time: the fdatasync on libuv's pool is not in it), with the SQLite
 * statements run per decision beside it (a count that does not depend on load). The baseline,
 * measured in the same run, is the floor: the same decision and audit rows written by bare
 * prepared INSERTs, 32 to a transaction. With BENCH_BASELINE_DIST (the `dist/` of another build,
 * e.g. main's) that build's store runs as a third contender, interleaved with this one, so a
 * change is measured old against new in one run. Read the ratios, never the absolute times.
 *
 *   npm run bench:store-commit     (BENCH_ROUNDS=15, BENCH_ITERATIONS=40 groups per contender and round)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { timeOrderedUuid } from "../src/app/time-ordered-id.js";
import { DECISION_COLUMNS, decisionRow, type DecisionRow } from "../src/store/decision-row.js";
import { openSqliteStore, type Store } from "../src/store/index.js";
import type { BudgetCharge, DecisionRecord } from "../src/store/port.js";
import { applySqliteMigrations } from "../src/store/sqlite/migrate.js";
import { SQLITE_MIGRATIONS } from "../src/store/sqlite/migrations.js";
import { fmt, median, spread } from "./rounds.js";

const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 15);
const ITERATIONS = Number(process.env["BENCH_ITERATIONS"] ?? 40);
const GROUP = 32;
const BASELINE_DIST = process.env["BENCH_BASELINE_DIST"];

const dir = mkdtempSync(join(tmpdir(), "charter-bench-commit-"));
const charge: BudgetCharge = {
  actionId: "email.send",
  grants: [
    {
      grantId: "g-root",
      maxCalls: Number.MAX_SAFE_INTEGER,
      maxCallsPerAction: Number.MAX_SAFE_INTEGER,
    },
  ],
};

/** An allow as the pipeline records it (time-ordered id, a caller, a digest of the usual length). */
function decision(): DecisionRecord {
  const id = timeOrderedUuid();
  return {
    decisionId: id,
    decidedAt: Math.floor(Date.now() / 1000),
    grantId: "0192f0a4-8c1e-7a3b-9d2e-5f6a7b8c9d0e",
    rootId: "0192f0a4-8c1e-7a3b-9d2e-5f6a7b8c9d0e",
    subject: "agent:support-triage",
    actionId: "email.send",
    toolName: "send_email",
    callId: `call-${id.slice(-8)}`,
    callDigest: `sha256:${"4f2c".repeat(16)}`,
    decision: "allow",
    catalogVersion: "2025-06-01",
    policyVersion: "policy-1",
    caller: "orchestrator",
  };
}

/**
 * Counts every statement run through better-sqlite3 (run, get, all; savepoints of db.transaction
 * included) while on: only in the unmeasured first round, so the count costs the timed rounds nothing.
 */
let statements = 0;
const proto = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1")) as Record<
  "run" | "get" | "all",
  (...args: unknown[]) => unknown
>;
const METHODS = ["run", "get", "all"] as const;
const originals = METHODS.map((m) => proto[m]);
const counting = (on: boolean) =>
  METHODS.forEach((m, i) => {
    const original = originals[i] as (...args: unknown[]) => unknown;
    proto[m] = on
      ? function (this: unknown, ...args: unknown[]) {
          statements += 1;
          return original.apply(this, args);
        }
      : original;
  });

interface Figures {
  readonly usPerDecision: number;
  readonly statementsPerDecision: number;
}

/** Runs `iteration` ITERATIONS times; answers the event loop's active time and the statements, per decision. */
async function measure(iteration: () => Promise<unknown> | undefined): Promise<Figures> {
  const startStatements = statements;
  const elu = performance.eventLoopUtilization();
  for (let i = 0; i < ITERATIONS; i++) await iteration();
  const active = performance.eventLoopUtilization(elu).active;
  const decisions = ITERATIONS * GROUP;
  return {
    usPerDecision: (active * 1000) / decisions,
    statementsPerDecision: (statements - startStatements) / decisions,
  };
}

const storeContender = (store: Store) => () =>
  measure(() =>
    Promise.all(
      Array.from({ length: GROUP }, () => store.commitDecision(decision(), { budget: charge })),
    ),
  );

/** The floor: the same rows by bare INSERTs, one transaction per group, the audit text and hash made once. */
function floorContender(): () => Promise<Figures> {
  const db = new Database(join(dir, "floor.db"));
  db.pragma("journal_mode = WAL");
  // As the store runs (it flushes the WAL itself, off the main thread): no flush in the commit.
  db.pragma("synchronous = NORMAL");
  applySqliteMigrations(db, SQLITE_MIGRATIONS, () => 0);
  const insertDecision = db.prepare<[DecisionRow], never>(
    `INSERT INTO decisions (${DECISION_COLUMNS.join(", ")}) VALUES (${DECISION_COLUMNS.map((c) => `@${c}`).join(", ")})`,
  );
  const insertAudit = db.prepare<[number, string, string], never>(
    "INSERT INTO audit_log (seq, entry, hash) VALUES (?, ?, ?)",
  );
  const entry = JSON.stringify({ kind: "decision", ...decision() });
  const hash = "0".repeat(64);
  let seq = 0;
  const group = db.transaction(() => {
    for (let i = 0; i < GROUP; i++) {
      insertDecision.run(decisionRow(decision()));
      insertAudit.run(++seq, entry, hash);
    }
  });
  return () =>
    measure(
      () =>
        new Promise<void>((done) =>
          setImmediate(() => {
            group();
            done();
          }),
        ),
    );
}

type Open = typeof openSqliteStore;
const stores: Store[] = [await openSqliteStore({ file: join(dir, "this.db") })];
const contenders: Record<string, () => Promise<Figures>> = {
  floor: floorContender(),
  "this build": storeContender(stores[0] as Store),
};
if (BASELINE_DIST !== undefined) {
  const other = (await import(
    pathToFileURL(join(resolve(BASELINE_DIST), "store", "index.js")).href
  )) as { openSqliteStore: Open };
  const store = await other.openSqliteStore({ file: join(dir, "baseline.db") });
  stores.push(store);
  contenders["baseline build"] = storeContender(store);
}

/** Every contender once per round, in turn (the order reversed every other round); the first round (a warm-up) counts the statements. */
const rounds: Record<string, Figures[]> = Object.fromEntries(
  Object.keys(contenders).map((n) => [n, []]),
);
const statementsOf: Record<string, number> = {};
for (let r = 0; r <= ROUNDS; r++) {
  const names = Object.keys(contenders);
  counting(r === 0);
  for (const name of r % 2 === 0 ? names : names.reverse()) {
    const figures = await (contenders[name] as () => Promise<Figures>)();
    if (r === 0) statementsOf[name] = figures.statementsPerDecision;
    else rounds[name]?.push(figures);
  }
}
for (const s of stores) await s.close();
rmSync(dir, { recursive: true, force: true });

console.log(
  `${ROUNDS} rounds of ${ITERATIONS} groups of ${GROUP} decisions per contender; main-thread µs per decision (median, spread) and statements per decision`,
);
const usOf = (name: string) => (rounds[name] ?? []).map((f) => f.usPerDecision);
const floorUs = median(usOf("floor"));
for (const [name, figures] of Object.entries(rounds)) {
  const us = figures.map((f) => f.usPerDecision);
  console.log(
    `  ${name.padEnd(15)} ${fmt(median(us))} µs  (spread ${fmt(spread(us) * 100)}%)  ${fmt(statementsOf[name] ?? 0)} statements  ×${fmt(median(us) / floorUs)} the floor`,
  );
}
if (BASELINE_DIST !== undefined) {
  const baseline = usOf("baseline build");
  const perRound = usOf("this build").map((us, i) => us / (baseline[i] as number));
  console.log(
    `  this build / baseline build, per round: median ${fmt(median(perRound))} (spread ${fmt(spread(perRound) * 100)}%)`,
  );
}
