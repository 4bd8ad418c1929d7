import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT_RPC_FAILED } from "../../src/cli/target.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";
import { runCapture, type CliRun } from "../support/cli.js";

// One command, one output shape: offline (the application layer over the server's data dir) and
// with --server (the running server's RPCs) print the same JSON and exit with the same code.

let charter: TestCharter;
let server: string;
let token: string;
beforeAll(async () => {
  charter = await startTestCharter();
  server = `127.0.0.1:${charter.server.port}`;
  token = (
    await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "agent:same",
      owner: "ana@example.com",
      purpose: "p",
    })
  ).grantToken;
});
afterAll(async () => {
  await charter.stop();
});

const cli = (...args: string[]): Promise<CliRun> => runCapture(args);

/** Runs a command offline on the server's data dir and against the server itself. */
async function bothWays(...args: string[]) {
  const offline = await cli(
    ...args,
    "--data-dir",
    charter.dataDir,
    "--catalog",
    join(FIXTURES, "catalog.yaml"),
    "--policy",
    join(FIXTURES, "policy.yaml"),
  );
  const online = await cli(...args, "--server", server);
  return { offline, online };
}

/** The parts of a verdict that differ per decision by design: its id and its receipt's bytes. */
function withoutPerDecision(out: string): unknown {
  const verdict = JSON.parse(out) as Record<string, unknown>;
  expect(typeof verdict["decisionId"]).toBe("string");
  const { decisionId: _id, receipt, ...rest } = verdict;
  return { ...rest, hasReceipt: typeof receipt === "string" && receipt !== "" };
}

const refund = (amount: number) =>
  JSON.stringify({ order_id: "ord_A1B2C3", amount, currency: "EUR", reason: "damaged" });

describe("charter check offline and with --server", () => {
  it.each([
    ["an allow", ["--tool", "issue_refund", "--args", refund(40)], 0],
    ["an explicit deny", ["--tool", "run_shell", "--args", '{"command":"ls"}'], 1],
    ["an approval", ["--tool", "issue_refund", "--args", refund(250)], 2],
    ["invalid arguments", ["--tool", "issue_refund", "--args", '{"amount":"lots"}'], 1],
    ["an unknown tool", ["--tool", "no_such_tool"], 1],
    ["an action by id", ["--action", "web.search", "--args", '{"query":"x"}'], 0],
  ])("prints the same verdict JSON for %s", async (_what, args, exit) => {
    const { offline, online } = await bothWays("check", "--token", token, ...args);
    expect([offline.code, online.code]).toEqual([exit, exit]);
    expect(withoutPerDecision(offline.out)).toEqual(withoutPerDecision(online.out));
  });

  it("prints the same deny for a forged token", async () => {
    const { offline, online } = await bothWays("check", "--token", "a.b.c", "--tool", "web_search");
    expect([offline.code, online.code]).toEqual([1, 1]);
    expect(withoutPerDecision(offline.out)).toEqual(withoutPerDecision(online.out));
    expect(JSON.parse(offline.out)).toMatchObject({
      decision: "DECISION_DENY",
      reason: { code: "GRANT_INVALID" },
    });
  });

  it("checks under a profile both ways", async () => {
    const { offline, online } = await bothWays(
      "check",
      "--profile",
      "owner-assistant-dryrun",
      "--tool",
      "web_search",
      "--args",
      '{"query":"x"}',
    );
    expect([offline.code, online.code]).toEqual([3, 3]);
    // Each way issues its own grant, and the call digest covers the grant id.
    const { callDigest: a, ...offlineRest } = withoutPerDecision(offline.out) as Record<
      string,
      unknown
    >;
    const { callDigest: b, ...onlineRest } = withoutPerDecision(online.out) as Record<
      string,
      unknown
    >;
    expect(offlineRest).toEqual(onlineRest);
    expect([typeof a, typeof b]).toEqual(["string", "string"]);
  });
});

describe("charter catalog and issue offline and with --server", () => {
  it.each([["anthropic"], ["mcp"], ["neutral"]])("prints the same %s catalog", async (dialect) => {
    const { offline, online } = await bothWays("catalog", "--token", token, "--dialect", dialect);
    expect([offline.code, online.code]).toEqual([0, 0]);
    expect(JSON.parse(offline.out)).toEqual(JSON.parse(online.out));
  });

  it("prints the same view", async () => {
    const { offline, online } = await bothWays("catalog", "--token", token, "--view");
    expect(JSON.parse(offline.out)).toEqual(JSON.parse(online.out));
  });

  it("prints the same refusal line and exit code for a bad token", async () => {
    const { offline, online } = await bothWays("catalog", "--token", "a.b.c");
    expect([offline.code, online.code]).toEqual([EXIT_RPC_FAILED, EXIT_RPC_FAILED]);
    expect(offline.err).toBe(online.err);
    expect(offline.err).toMatch(/^UNAUTHENTICATED: GRANT_INVALID: /);
  });

  it("prints a grant of the same shape", async () => {
    const { offline, online } = await bothWays(
      "issue",
      "--profile",
      "receptionist",
      "--subject",
      "agent:r",
      "--owner",
      "ana@example.com",
      "--json",
    );
    const shape = (out: string) => {
      const { grant, token: t } = JSON.parse(out) as {
        grant: Record<string, unknown>;
        token: string;
      };
      expect(t.split(".")).toHaveLength(3);
      const { id: _id, rootId: _root, issuedAt: _at, expiresAt: _exp, ...rest } = grant;
      return rest;
    };
    expect(shape(offline.out)).toEqual(shape(online.out));
  });

  it("prints the same refusal for a profile that cannot be composed", async () => {
    const { offline, online } = await bothWays("issue", "--profile", "legacy-integration");
    expect([offline.code, online.code]).toEqual([EXIT_RPC_FAILED, EXIT_RPC_FAILED]);
    expect(offline.err).toBe(online.err);
    expect(offline.err).toMatch(/^FAILED_PRECONDITION: SOURCE_SUSPENDED: /);
  });
});
