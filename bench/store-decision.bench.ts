/**
 * One decision's store work on SQLite (its CPU: in memory, so no flush), in groups of 64 (an
 * allow with a budget charge: idempotency read, budget upsert, decision row, audit head read,
 * canonical audit text, chain hash, audit row, savepoints, one commit per group). The baseline,
 * measured in the same run on a second in-memory database with the same schema, is the floor:
 * the same 64 decision rows and 64 audit rows written by bare prepared INSERTs in one
 * transaction. Both use the ids the shell makes (time-ordered), so both append to the same
 * indexes. Read the ratio vitest prints, never the absolute times.
 *
 *   npx vitest bench --run bench/store-decision.bench.ts
 */
import Database from "better-sqlite3";
import { afterAll, beforeAll, bench, describe } from "vitest";
import { timeOrderedUuid } from "../src/app/time-ordered-id.js";
import { DECISION_COLUMNS, decisionRow, type DecisionRow } from "../src/store/decision-row.js";
import { openSqliteStore, type Store } from "../src/store/index.js";
import { applySqliteMigrations } from "../src/store/sqlite/migrate.js";
import { SQLITE_MIGRATIONS } from "../src/store/sqlite/migrations.js";
import { makeDecision } from "../test/store/fixtures.js";

const BATCH = 64;
let store: Store;
let floor: Database.Database;
const entry = JSON.stringify({ kind: "decision", ...makeDecision("dec_x") });

beforeAll(async () => {
  store = await openSqliteStore({ file: ":memory:" });
  // The floor: the same schema, written without Charter's code.
  floor = new Database(":memory:");
  applySqliteMigrations(floor, SQLITE_MIGRATIONS, () => 0);
});
afterAll(async () => {
  await store.close();
  floor.close();
});

describe(`one decision's store work, in groups of ${BATCH}`, () => {
  const effects = {
    budget: {
      actionId: "email.send",
      grants: [{ grantId: "g", maxCalls: Number.MAX_SAFE_INTEGER }],
    },
  };
  let insertDecision: Database.Statement<[DecisionRow], never> | undefined;
  let insertAudit: Database.Statement<[number, string, string], never> | undefined;
  let seq = 0;
  bench("baseline: bare INSERTs of the same rows, one transaction", () => {
    insertDecision ??= floor.prepare(
      `INSERT INTO decisions (${DECISION_COLUMNS.join(", ")}) VALUES (${DECISION_COLUMNS.map((c) => `@${c}`).join(", ")})`,
    );
    insertAudit ??= floor.prepare("INSERT INTO audit_log (seq, entry, hash) VALUES (?, ?, ?)");
    const d = insertDecision;
    const a = insertAudit;
    floor.transaction(() => {
      for (let i = 0; i < BATCH; i++) {
        d.run(decisionRow(makeDecision(`dec_${timeOrderedUuid()}`)));
        a.run(++seq, entry, "0".repeat(64));
      }
    })();
  });
  bench("commitDecision, concurrent (group commit)", async () => {
    await Promise.all(
      Array.from({ length: BATCH }, () =>
        store.commitDecision(makeDecision(`dec_${timeOrderedUuid()}`), effects),
      ),
    );
  });
});
