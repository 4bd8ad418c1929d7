import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openSqliteStore, type Store } from "../../src/store/index.js";
import { isStoreError } from "../../src/store/port.js";
import type { DecisionEffects } from "../../src/store/port.js";
import { makeDecision } from "./fixtures.js";
import { tempDirs } from "./temp-dirs.js";

const dirs = tempDirs("charter-group-budgets");
afterAll(() => dirs.removeAll());

const closing: { close(): unknown }[] = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c.close();
});

/** A store on a new file and a second, plain connection to it (to add triggers that make a statement of the store fail). */
async function storeAndSql(): Promise<{ store: Store; sql: Database.Database }> {
  const file = join(dirs.make(), "charter.db");
  const store = await openSqliteStore({ file });
  const sql = new Database(file);
  closing.push(store, sql);
  return { store, sql };
}

const charge = (maxCalls: number): DecisionEffects => ({
  budget: { actionId: "email.send", grants: [{ grantId: "g", maxCalls }] },
});
let n = 0;
/** The outcome's kind, or the StoreError's code. */
const outcome = (p: Promise<{ kind: string }>) =>
  p.then(
    (o) => o.kind,
    (err: unknown) => (isStoreError(err) ? err.code : "not a StoreError"),
  );

describe("budget counters charged in the group's memory", () => {
  it("takes back the charge of a unit that fails after charging, and the next units of the group see the counter without it", async () => {
    const { store, sql } = await storeAndSql();
    // The decision row of call "boom" cannot be inserted: its unit fails after its budget was charged.
    sql.exec(
      "CREATE TRIGGER boom BEFORE INSERT ON decisions WHEN NEW.call_id = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END",
    );
    const commit = (callId: string) =>
      outcome(store.commitDecision(makeDecision(`dec_${n++}`, { callId }), charge(2)));
    expect(await Promise.all([commit("a"), commit("boom"), commit("b"), commit("c")])).toEqual([
      "committed",
      "CONFLICT",
      "committed",
      "refused",
    ]);
    expect(await store.getBudgetUsage("g")).toEqual({ calls: 2, perAction: {} });
  });

  it("takes back the charge of a group of one that fails after charging", async () => {
    const { store, sql } = await storeAndSql();
    sql.exec(
      "CREATE TRIGGER boom BEFORE INSERT ON decisions WHEN NEW.call_id = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END",
    );
    const commit = (callId: string) =>
      outcome(store.commitDecision(makeDecision(`dec_${n++}`, { callId }), charge(1)));
    expect(await commit("boom")).toBe("CONFLICT");
    expect(await commit("a")).toBe("committed");
    expect(await commit("b")).toBe("refused");
    expect(await store.getBudgetUsage("g")).toEqual({ calls: 1, perAction: {} });
  });

  it("fails the whole group when its counters cannot be written, and the next group reads them again", async () => {
    const { store, sql } = await storeAndSql();
    const group = (size: number) =>
      Promise.all(
        Array.from({ length: size }, () =>
          outcome(store.commitDecision(makeDecision(`dec_${n++}`), charge(5))),
        ),
      );
    expect(await group(2)).toEqual(["committed", "committed"]);
    sql.exec(
      "CREATE TRIGGER full BEFORE UPDATE ON budget_counters WHEN NEW.used = 4 BEGIN SELECT RAISE(ABORT, 'full'); END",
    );
    expect(await group(2)).toEqual(["CONFLICT", "CONFLICT"]);
    expect(await store.getBudgetUsage("g")).toEqual({ calls: 2, perAction: {} });
    expect((await store.readAudit(0, 100)).length).toBe(2);
    sql.exec("DROP TRIGGER full");
    expect(await group(4)).toEqual(["committed", "committed", "committed", "refused"]);
    expect(await store.getBudgetUsage("g")).toEqual({ calls: 5, perAction: {} });
  });

  it("reads the counters again in every group: a charge by another connection between groups counts", async () => {
    const { store, sql } = await storeAndSql();
    const commit = () => outcome(store.commitDecision(makeDecision(`dec_${n++}`), charge(3)));
    expect(await commit()).toBe("committed");
    sql.prepare("UPDATE budget_counters SET used = 3 WHERE grant_id = 'g'").run();
    expect(await commit()).toBe("refused");
    expect(await store.getBudgetUsage("g")).toEqual({ calls: 3, perAction: {} });
  });

  it("fails a call whose counter does not hold a number CORRUPT, charging nothing", async () => {
    const { store, sql } = await storeAndSql();
    sql
      .prepare("INSERT INTO budget_counters (grant_id, action_id, used) VALUES ('g', '', 'many')")
      .run();
    expect(await outcome(store.commitDecision(makeDecision(`dec_${n++}`), charge(3)))).toBe(
      "CORRUPT",
    );
    expect(sql.prepare("SELECT used FROM budget_counters").all()).toEqual([{ used: "many" }]);
    expect(await store.readAudit(0, 10)).toEqual([]);
  });

  it("writes no counter row for a call refused after a first charge, nor for a unit rolled back", async () => {
    const { store, sql } = await storeAndSql();
    sql.exec(
      "CREATE TRIGGER boom BEFORE INSERT ON decisions WHEN NEW.call_id = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END",
    );
    const commit = (callId: string, effects: DecisionEffects) =>
      outcome(store.commitDecision(makeDecision(`dec_${n++}`, { callId }), effects));
    // g2's grant-wide counter is read and charged, then its per-action limit refuses the call; g3's is charged by a unit that fails.
    const spentPerAction = {
      budget: { actionId: "x", grants: [{ grantId: "g2", maxCalls: 5, maxCallsPerAction: 0 }] },
    };
    const other = { budget: { actionId: "x", grants: [{ grantId: "g3", maxCalls: 9 }] } };
    expect(
      await Promise.all([
        commit("a", spentPerAction),
        commit("boom", other),
        commit("b", charge(9)),
      ]),
    ).toEqual(["refused", "CONFLICT", "committed"]);
    expect(
      sql
        .prepare(
          "SELECT grant_id, action_id, used FROM budget_counters ORDER BY grant_id, action_id",
        )
        .all(),
    ).toEqual([{ grant_id: "g", action_id: "", used: 1 }]);
  });
});
