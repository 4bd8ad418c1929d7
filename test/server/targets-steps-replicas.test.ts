import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decision, type ToolCall } from "../../src/gen/charter/v1/common_pb.js";
import type { TestCharter } from "../support/charter-server.js";
import { describePostgres, testSchema } from "../support/postgres.js";
import {
  issueRun,
  OperationKind,
  operationCall,
  startRefundCharter,
} from "../support/refund-workflow.js";

// One step asked at once through two servers on one store — two servers on one SQLite file (two
// connections, as two processes would be), or two replicas on one PostgreSQL schema: one
// decision, the loser of every race answering the winner's, one budget unit, one audit record.

describe("on one SQLite file", () => {
  stepSuite("SQLite", async () => {
    const a = await startRefundCharter();
    const b = await startRefundCharter({ dataDir: a.dataDir });
    return { a, b, stop: () => b.stop({ keepData: true }).then(() => a.stop()) };
  });
});

describePostgres("on two PostgreSQL replicas", () => {
  const schema = testSchema("steps");
  beforeAll(() => schema.create());
  afterAll(() => schema.drop());
  stepSuite("PostgreSQL", async () => {
    const [a, b] = await Promise.all(
      [0, 1].map(() => startRefundCharter({ config: { database: schema.url } })),
    );
    if (!a || !b) throw new Error("two replicas expected");
    return { a, b, stop: () => Promise.all([a.stop(), b.stop()]).then(() => undefined) };
  });
});

function stepSuite(
  label: string,
  start: () => Promise<{ a: TestCharter; b: TestCharter; stop: () => Promise<void> }>,
): void {
  let a: TestCharter;
  let b: TestCharter;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ a, b, stop } = await start());
  });
  afterAll(() => stop());

  const ask = async (via: TestCharter, grantToken: string, call: ToolCall) => {
    const { verdict } = await via.clients.authority.authorize({ grantToken, call });
    if (!verdict) throw new Error("no verdict");
    return verdict;
  };
  const decisionsOfRun = async (run: string) =>
    (await a.server.context.store.readAudit(0, 1_000_000))
      .map((r) => JSON.parse(r.entry) as Record<string, unknown>)
      .filter((e) => e["kind"] === "decision" && e["runId"] === run);

  it(`answers one step asked 24 times at once through both servers with one decision (${label})`, async () => {
    const run = await issueRun(a);
    const call = operationCall({
      run: `run-race-${label}`,
      node: "lookup-order",
      activation: "act-1",
      action: "refund.lookup_order",
      kind: OperationKind.ACTIVITY,
      args: { order_id: "ord_A1B2C3" },
    });
    const verdicts = await Promise.all(
      Array.from({ length: 24 }, (_, i) => ask(i % 2 === 0 ? a : b, run.token, call)),
    );
    expect(verdicts.every((v) => v.decision === Decision.ALLOW)).toBe(true);
    expect(new Set(verdicts.map((v) => v.decisionId)).size).toBe(1);
    expect(new Set(verdicts.map((v) => v.receipt)).size).toBe(1);
    expect((await b.server.context.store.getBudgetUsage(run.id)).calls).toBe(1);
    expect(await decisionsOfRun(`run-race-${label}`)).toHaveLength(1);
  });

  it(`holds a refund's approval once for a step asked at once through both servers (${label})`, async () => {
    const run = await issueRun(b);
    const call = operationCall({
      run: `run-held-${label}`,
      node: "issue-refund",
      activation: "act-2",
      action: "refund.issue",
      kind: OperationKind.ACTIVITY,
      args: { order_id: "ord_A1B2C3", amount: 500, currency: "USD" },
    });
    const verdicts = await Promise.all(
      Array.from({ length: 10 }, (_, i) => ask(i % 2 === 0 ? b : a, run.token, call)),
    );
    expect(verdicts.every((v) => v.decision === Decision.REQUIRE_APPROVAL)).toBe(true);
    expect(new Set(verdicts.map((v) => `${v.decisionId} ${v.approvalId}`)).size).toBe(1);
  });
}
