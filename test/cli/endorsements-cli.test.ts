import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";
import { runCapture, type CliRun } from "../support/cli.js";

// `charter approvals endorse | endorsements | revoke-endorsement` offline (on the server's data
// dir) and with --server: the same output, texts escaped, and the endorsement used by the server.
const OWNER = "cli-owner@example.com";
let charter: TestCharter;
let server: string;
let grantToken: string;
const charge = (amount: number) =>
  JSON.stringify({ customer_id: "cus_ABC123", amount, currency: "EUR", description: "d" });
const ask = async (amount: number) =>
  (
    await charter.clients.authority.authorize({
      grantToken,
      call: { callId: `c${amount}`, toolName: "charge_payment", argumentsJson: charge(amount) },
    })
  ).verdict;

async function approved(amount: number): Promise<string> {
  const id = (await ask(amount))?.approvalId ?? "";
  await charter.clients.approvals.decideApproval({
    approvalId: id,
    outcome: ApprovalOutcome.APPROVE,
    decidedBy: OWNER,
    note: "",
  });
  return id;
}

beforeAll(async () => {
  charter = await startTestCharter();
  server = `127.0.0.1:${charter.server.port}`;
  ({ grantToken } = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:cli",
    owner: OWNER,
    purpose: "p",
  }));
});
afterAll(async () => {
  await charter.stop();
});

const offline = (...args: string[]): Promise<CliRun> =>
  runCapture([
    ...args,
    "--data-dir",
    charter.dataDir,
    "--catalog",
    join(FIXTURES, "catalog.yaml"),
    "--policy",
    join(FIXTURES, "policy.yaml"),
  ]);
const online = (...args: string[]) => runCapture([...args, "--server", server]);
const endorseArgs = (id: string, by: string) => [
  "approvals",
  "endorse",
  id,
  "--bounds",
  '{"properties":{"amount":{"maximum":50}}}',
  "--calls",
  "2",
  "--minutes",
  "10",
  "--by",
  by,
];
const strip = (out: string) =>
  out.replace(/end_[0-9a-f-]+/g, "end_X").replace(/"createdAt": "\d+"|"expiresAt": "\d+"/g, "T");

describe("charter approvals endorse / endorsements / revoke-endorsement", () => {
  it("endorses the same offline and with --server, and the server uses both", async () => {
    const [first, second] = [await approved(10), await approved(11)];
    const [a, b] = [
      await offline(...endorseArgs(first, OWNER)),
      await online(...endorseArgs(second, OWNER)),
    ];
    expect(a).toMatchObject({ code: 0 });
    expect(b.code).toBe(0);
    expect(strip(b.out).replace(/apr_[0-9a-f-]+/, "apr")).toBe(
      strip(a.out).replace(/apr_[0-9a-f-]+/, "apr"),
    );
    expect(JSON.parse(a.out)).toMatchObject({
      maxCalls: 2,
      endorsedBy: OWNER,
      status: "ENDORSEMENT_STATUS_ACTIVE",
    });
    // Two endorsements by one endorser: one approves each call, 2 calls each.
    const decisions = [];
    for (const amount of [20, 21, 22, 23, 24]) decisions.push((await ask(amount))?.decision);
    expect(decisions.filter((d) => d === Decision.ALLOW)).toHaveLength(4);

    const list = ["approvals", "endorsements", "--owner", OWNER];
    const [l1, l2] = [await offline(...list), await online(...list)];
    expect(l1.code).toBe(0);
    expect(l2).toEqual(l1);
    const ids = (JSON.parse(l1.out) as { endorsements: { id: string }[] }).endorsements.map(
      (e) => e.id,
    );
    expect(ids).toHaveLength(2);

    const r1 = await offline("approvals", "revoke-endorsement", ids[0] ?? "", "--by", OWNER);
    const r2 = await online("approvals", "revoke-endorsement", ids[1] ?? "", "--by", OWNER);
    expect(JSON.parse(r1.out)).toMatchObject({
      status: "ENDORSEMENT_STATUS_REVOKED",
      revokedBy: OWNER,
    });
    expect(JSON.parse(r2.out)).toMatchObject({
      status: "ENDORSEMENT_STATUS_REVOKED",
      revokedBy: OWNER,
    });
  });

  it("escapes the texts it prints, and refuses an endorser who did not approve", async () => {
    const id = await approved(12);
    const refused = await offline(...endorseArgs(id, "someone\u202Eelse@example.com"));
    expect(refused.code).not.toBe(0);
    expect(refused.err).toMatch(/FAILED_PRECONDITION|PERMISSION_DENIED/);
    expect(refused.err).not.toContain("\u202E");
  });
});
