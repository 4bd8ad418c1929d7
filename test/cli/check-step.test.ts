import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestCharter } from "../support/charter-server.js";
import { runCapture } from "../support/cli.js";
import { issueRun, startRefundCharter } from "../support/refund-workflow.js";

// `charter check`'s target and step flags refuse what cannot be a target or a step before anything is asked.
describe("charter check target and step flags", () => {
  it.each([
    [
      "--tool-call without --run",
      ["--tool-call", "tc-1"],
      "--tool-call and --activation need --run",
    ],
    [
      "--run with both steps",
      ["--run", "r", "--tool-call", "t", "--activation", "a"],
      "give --tool-call or --activation, not both",
    ],
    [
      "an attempt of 0",
      ["--run", "r", "--activation", "a", "--attempt", "0"],
      "--attempt must be a whole number from 1",
    ],
    [
      "an operation kind the CLI does not know",
      ["--operation", "teleport"],
      "--operation must be one of activity, signal, job, owned_job, subgraph, agent, fork",
    ],
    [
      "an operation and an agent",
      ["--operation", "signal", "--agent", "x"],
      "give --operation or --agent, not both",
    ],
  ])("refuses %s (exit 64)", async (_what, flags, message) => {
    const run = await runCapture([
      "check",
      "--token",
      "t",
      "--action",
      "refund.lookup_order",
      ...flags,
    ]);
    expect(run.code).toBe(64);
    expect(run.err).toContain(message);
  });
});

describe("charter check --server with a target and a step", () => {
  let charter: TestCharter;
  beforeAll(async () => {
    charter = await startRefundCharter();
  });
  afterAll(() => charter.stop());

  it("sends them through the TypeScript client: a retry is the same decision, attempt 2 a new one", async () => {
    const { token } = await issueRun(charter);
    const server = `127.0.0.1:${charter.server.port}`;
    const check = (attempt: string) =>
      runCapture([
        "check",
        "--server",
        server,
        "--token",
        token,
        "--action",
        "refund.lookup_order",
        "--operation",
        "activity",
        "--node",
        "lookup-order",
        "--run",
        "r1",
        "--activation",
        "a1",
        "--attempt",
        attempt,
        "--args",
        '{"order_id":"ord_A1B2C3"}',
      ]);
    const decisionOf = (out: string) => JSON.parse(out) as { decision: string; decisionId: string };
    const [first, again, second] = [await check("1"), await check("1"), await check("2")].map((r) =>
      decisionOf(r.out),
    );
    expect(first?.decision).toBe("DECISION_ALLOW");
    expect(again?.decisionId).toBe(first?.decisionId);
    expect(second?.decisionId).not.toBe(first?.decisionId);
  });
});
