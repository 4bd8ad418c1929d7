import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT_RPC_FAILED } from "../../src/cli/target.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";
import { runCapture, type CliRun } from "../support/cli.js";

// `charter approvals` prints the same output offline (on the server's data dir) and with --server.
let charter: TestCharter;
let server: string;
let approvalId: string;
beforeAll(async () => {
  charter = await startTestCharter();
  server = `127.0.0.1:${charter.server.port}`;
  const { grantToken } = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:cli",
    owner: "cli-owner@example.com",
    purpose: "p",
  });
  const argumentsJson = JSON.stringify({
    customer_id: "cus_ABC123",
    amount: 5,
    currency: "EUR",
    description: "d",
    authorization_code: "CLI-SECRET-CODE",
  });
  const { verdict } = await charter.clients.authority.authorize({
    grantToken,
    call: { callId: "c", toolName: "charge_payment", argumentsJson },
  });
  approvalId = verdict?.approvalId ?? "";
});
afterAll(async () => {
  await charter.stop();
});

const cli = (...args: string[]): Promise<CliRun> => runCapture(args);

const offline = (...args: string[]) =>
  cli(
    ...args,
    "--data-dir",
    charter.dataDir,
    "--catalog",
    join(FIXTURES, "catalog.yaml"),
    "--policy",
    join(FIXTURES, "policy.yaml"),
  );
const online = (...args: string[]) => cli(...args, "--server", server);

describe("charter approvals", () => {
  it("list and show print the same JSON offline and with --server, without secret values", async () => {
    for (const args of [
      ["approvals", "list", "--owner", "cli-owner@example.com"],
      ["approvals", "show", approvalId],
    ]) {
      const [a, b] = [await offline(...args), await online(...args)];
      expect(a).toMatchObject({ code: 0 });
      expect(b).toEqual(a);
      expect(a.out).toContain(approvalId);
      expect(a.out).not.toContain("CLI-SECRET-CODE");
    }
  });

  it("approve offline, then a second answer with --server is refused with the same line as offline", async () => {
    const approved = await offline(
      "approvals",
      "approve",
      approvalId,
      "--by",
      "cli-owner@example.com",
      "--note",
      "fine",
    );
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.out)).toMatchObject({
      status: "APPROVAL_STATUS_APPROVED",
      approvedBy: ["cli-owner@example.com"],
    });
    const [a, b] = [
      await offline("approvals", "reject", approvalId, "--by", "x"),
      await online("approvals", "reject", approvalId, "--by", "x"),
    ];
    expect(a.code).toBe(EXIT_RPC_FAILED);
    expect(a.err).toMatch(/^FAILED_PRECONDITION: approval apr_\S+ is approved, not pending/);
    expect(b).toEqual(a);
  });

  it("watch prints one JSON line per event, resumable with --after", async () => {
    const all = await online(
      "approvals",
      "watch",
      "--owner",
      "cli-owner@example.com",
      "--after",
      "0",
      "--count",
      "2",
    );
    const events = all.out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { kind: string; sequence: string });
    expect(events.map((e) => e.kind)).toEqual([
      "APPROVAL_EVENT_KIND_CREATED",
      "APPROVAL_EVENT_KIND_DECIDED",
    ]);
    const resumed = await offline(
      "approvals",
      "watch",
      "--owner",
      "cli-owner@example.com",
      "--after",
      events[0]?.sequence ?? "0",
      "--count",
      "1",
    );
    expect((JSON.parse(resumed.out) as { kind: string }).kind).toBe("APPROVAL_EVENT_KIND_DECIDED");
  });

  it("refuses a missing --by as a usage error", async () => {
    expect((await offline("approvals", "approve", approvalId)).code).toBe(64);
  });
});
