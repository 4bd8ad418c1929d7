import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { auditLinkProblem, GENESIS_HASH } from "../../src/core/audit-chain.js";
import { auditEntryJson } from "../../src/store/audit-row.js";
import { decisionAudit } from "../../src/store/decision-row.js";
import { openSqliteStore, type Store } from "../../src/store/index.js";
import type { DecisionEffects, DecisionRecord } from "../../src/store/port.js";
import { makeDecision } from "./fixtures.js";
import { tempDirs } from "./temp-dirs.js";

const dirs = tempDirs("charter-group-work");
afterAll(() => dirs.removeAll());

const open: Store[] = [];
const openStore = async (file: string) => {
  const store = await openSqliteStore({ file });
  open.push(store);
  return store;
};
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

/** Every record of the chain, checked link by link from the genesis hash; answers the records. */
async function verifiedChain(store: Store) {
  const rows = await store.readAudit(0, 100_000);
  let previous = { seq: 0, hash: GENESIS_HASH };
  for (const row of rows) {
    expect(auditLinkProblem(previous, row)).toBeUndefined();
    previous = row;
  }
  expect(await store.auditHead()).toEqual(
    rows.length === 0 ? undefined : { seq: previous.seq, hash: previous.hash },
  );
  return rows;
}

const charge = (maxCalls: number, maxCallsPerAction = maxCalls): DecisionEffects => ({
  budget: { actionId: "email.send", grants: [{ grantId: "g", maxCalls, maxCallsPerAction }] },
});

describe("the SQLite group commit's work per decision", () => {
  it("stores every column where it belongs (bound by position)", async () => {
    const store = await openStore(join(dirs.make(), "charter.db"));
    const full: DecisionRecord = {
      decisionId: "dec-1",
      decidedAt: 1_750_000_123,
      grantId: "grant-2",
      rootId: "root-3",
      subject: "subject-4",
      actionId: "action-5",
      toolName: "tool-6",
      callId: "call-7",
      callDigest: "digest-8",
      decision: "deny",
      reasonCode: "NOT_GRANTED",
      approvalId: "approval-9",
      catalogVersion: "catalog-10",
      policyVersion: "policy-11",
      caller: "caller-12",
      runId: "run-13",
      stepKey: "step-14",
    };
    await store.commitDecision(full);
    expect(await store.getDecision("dec-1")).toStrictEqual(full);
  });

  it("keeps the chain and the counters exact when units in the middle of a group are refused or fail", async () => {
    const store = await openStore(join(dirs.make(), "charter.db"));
    await store.commitDecision(makeDecision("dec-taken"), charge(3));
    // One group: allows, a conflicting recommit (throws: its unit rolls back alone), refusals once the counter is spent.
    const results = await Promise.allSettled([
      store.commitDecision(makeDecision("dec-a"), charge(3)),
      store.commitDecision(makeDecision("dec-taken", { callDigest: "other" }), charge(3)),
      store.commitDecision(makeDecision("dec-b"), charge(3)),
      store.commitDecision(makeDecision("dec-c"), charge(3)),
      store.commitDecision(makeDecision("dec-d", { caller: "x" }), charge(10, 2)),
      store.commitDecision(makeDecision("dec-e"), charge(10)),
    ]);
    expect(
      results.map((r) =>
        r.status === "fulfilled" ? r.value.kind : (r.reason as { code: string }).code,
      ),
    ).toEqual(["committed", "CONFLICT", "committed", "refused", "refused", "committed"]);
    expect(await store.getBudgetUsage("g")).toEqual({ calls: 4, perAction: { "email.send": 4 } });
    const rows = await verifiedChain(store);
    const ids = ["dec-taken", "dec-a", "dec-b", "dec-c", "dec-d", "dec-e"];
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    // Each record's text is the generic text of its decision, as stored (a refused allow as its deny).
    for (const [i, row] of rows.entries()) {
      const stored = (await store.getDecision(ids[i] as string)) as DecisionRecord;
      expect(row.entry).toBe(auditEntryJson({ ...decisionAudit(stored), seq: row.seq }));
    }
    expect(await store.getDecision("dec-c")).toMatchObject({
      decision: "deny",
      reasonCode: "LIMIT_EXCEEDED",
    });
    expect(await store.getDecision("dec-d")).toMatchObject({
      decision: "deny",
      reasonCode: "LIMIT_EXCEEDED",
      caller: "x",
    });
  });

  it("rolls back a unit whose audit record cannot be written with its row and its charges, and the chain goes on from the head before it", async () => {
    const file = join(dirs.make(), "charter.db");
    const store = await openStore(file);
    const sql = new Database(file);
    try {
      sql.exec(
        "CREATE TRIGGER boom BEFORE INSERT ON audit_log WHEN NEW.entry LIKE '%\"callId\":\"boom\"%' BEGIN SELECT RAISE(ABORT, 'boom'); END",
      );
    } finally {
      sql.close();
    }
    const commit = (id: string, callId = "call") =>
      store.commitDecision(makeDecision(id, { callId }), charge(2)).then(
        (o) => o.kind,
        () => "failed",
      );
    expect(
      await Promise.all([
        commit("dec-a"),
        commit("dec-boom", "boom"),
        commit("dec-b"),
        commit("dec-c"),
      ]),
    ).toEqual(["committed", "failed", "committed", "refused"]);
    expect(await store.getDecision("dec-boom")).toBeUndefined();
    expect(await store.getBudgetUsage("g")).toEqual({ calls: 2, perAction: { "email.send": 2 } });
    const rows = await verifiedChain(store);
    expect(
      rows.map((r) => [r.seq, (JSON.parse(r.entry) as { decisionId: string }).decisionId]),
    ).toEqual([
      [1, "dec-a"],
      [2, "dec-b"],
      [3, "dec-c"],
    ]);
  });

  it("keeps one chain and exact counters when two stores on one file interleave their groups", async () => {
    const file = join(dirs.make(), "charter.db");
    const [a, b] = [await openStore(file), await openStore(file)] as [Store, Store];
    let n = 0;
    const group = (store: Store, size: number) =>
      Promise.all(
        Array.from({ length: size }, () =>
          store.commitDecision(makeDecision(`dec-${n++}`), charge(45)),
        ),
      );
    const outcomes = [];
    // Each round is a group on each store (a's first, then b's, on the same file).
    for (const [sizeA, sizeB] of [
      [10, 10],
      [1, 7],
      [10, 12],
    ] as const)
      outcomes.push(...(await Promise.all([group(a, sizeA), group(b, sizeB)])).flat());
    expect(outcomes.filter((o) => o.kind === "committed")).toHaveLength(45);
    expect(await a.getBudgetUsage("g")).toEqual({ calls: 45, perAction: { "email.send": 45 } });
    const rows = await verifiedChain(b);
    expect(rows).toHaveLength(50);
    expect(await verifiedChain(a)).toEqual(rows);
  });
});
