import { describe, expect, it } from "vitest";
import { runCapture } from "../support/cli.js";

// `charter check`'s target and step flags refuse what cannot be a target or a step before anything is asked.
describe("charter check target and step flags", () => {
  it.each([
    ["--tool-call without --run", ["--tool-call", "tc-1"], "--tool-call and --activation need --run"],
    ["--run without a step", ["--run", "r"], "--run needs --tool-call or --activation"],
    ["--run with both steps", ["--run", "r", "--tool-call", "t", "--activation", "a"], "--run needs --tool-call or --activation"],
    ["an attempt of 0", ["--run", "r", "--activation", "a", "--attempt", "0"], "--attempt must be a whole number from 1"],
    ["an operation kind the CLI does not know", ["--operation", "teleport"], "--operation must be one of activity, signal, job, owned_job, subgraph, agent, fork"],
    ["an operation and an agent", ["--operation", "signal", "--agent", "x"], "give --operation or --agent, not both"],
  ])("refuses %s (exit 64)", async (_what, flags, message) => {
    const run = await runCapture(["check", "--token", "t", "--action", "refund.lookup_order", ...flags]);
    expect(run.code).toBe(64);
    expect(run.err).toContain(message);
  });
});
