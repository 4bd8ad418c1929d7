import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/authority/index.js";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { ApprovalStatus, Decision } from "../../src/gen/charter/v1/common_pb.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";
import { runCapture } from "../support/cli.js";

// Issue 25: approvers are principals with roles from the approver directory. Against the real
// server with API keys: the demo's two managers (mgr1, mgr2 in fixtures/approvers.yaml) meet the
// "manager" requirement with keys that carry only the `approver` role; the owner plus an admin
// do not make two managers; a key whose principal the directory does not list counts for
// nothing; a scoped approver counts only for its owners; the requester never approves its call.
const OWNER = "ana@example.com";
const OTHER = "ben@example.com";
const SUBJECT = "agent:worker-1";

let charter: TestCharter;
let dir: string;
const clients = new Map<string, CharterClients>();
const as = (name: string): CharterClients => {
  const c = clients.get(name);
  if (c === undefined) throw new Error(`no caller ${name}`);
  return c;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "charter-approvers-"));
  const approvers = join(dir, "approvers.yaml");
  writeFileSync(
    approvers,
    [
      "approvers:",
      "  mgr1@example.com: [manager]",
      "  mgr2@example.com: [manager]",
      `  scoped@example.com: { roles: [manager], owners: [${OTHER}] }`,
      "  lead@example.com: { roles: [manager], teams: [support] }",
      `  ${SUBJECT}: [manager]`,
      "teams:",
      `  support: [${OWNER}]`,
      "",
    ].join("\n"),
  );
  charter = await startTestCharter({ config: { approvers } });
  const address = `127.0.0.1:${charter.server.port}`;
  const keys: [string, string, string[]][] = [
    ["orchestrator", "orchestrator", ["issuer", "gateway"]],
    ["owner", OWNER, ["approver"]],
    ["admin", "ops", ["admin"]],
    ["mgr1", "mgr1@example.com", ["approver"]],
    ["mgr2", "mgr2@example.com", ["approver"]],
    ["mgr3", "mgr3@example.com", ["approver"]],
    ["scoped", "scoped@example.com", ["approver"]],
    ["lead", "lead@example.com", ["approver"]],
    ["requester", SUBJECT, ["approver"]],
  ];
  for (const [name, principal, roles] of keys) {
    const { secret } = await createApiKey(charter.server.context, { principal, roles });
    clients.set(
      name,
      createCharterClients({ address, metadata: { authorization: `Bearer ${secret}` } }),
    );
  }
});
afterAll(async () => {
  for (const c of clients.values()) c.close();
  await charter.stop();
  rmSync(dir, { recursive: true, force: true });
});

const REFUND = { order_id: "ord_A1B2C3", amount: 250, currency: "EUR", reason: "damaged" };

/** A refund of 250 held for two managers under a fresh grant owned by `owner`. */
async function heldRefund(owner = OWNER) {
  const { grantToken } = await as("orchestrator").grants.issueGrant({
    profile: "owner-assistant",
    subject: SUBJECT,
    owner,
    purpose: "directory",
  });
  const ask = async (approvalId?: string) =>
    (
      await as("orchestrator").authority.authorize({
        grantToken,
        call: { callId: "c-1", toolName: "issue_refund", argumentsJson: JSON.stringify(REFUND) },
        ...(approvalId === undefined ? {} : { approvalId }),
      })
    ).verdict;
  const verdict = await ask();
  expect(verdict?.decision).toBe(Decision.REQUIRE_APPROVAL);
  expect(verdict?.requirement).toBe("manager");
  return { approvalId: verdict?.approvalId ?? "", ask };
}

const approve = (who: string, approvalId: string) =>
  as(who).approvals.decideApproval({
    approvalId,
    outcome: ApprovalOutcome.APPROVE,
    // Ignored for an authenticated caller: each answers as its own principal.
    decidedBy: "mgr2@example.com",
    note: "",
  });

describe("the approver directory", () => {
  it("two directory managers approve with approver keys; the call runs once", async () => {
    const { approvalId, ask } = await heldRefund();
    const first = await approve("mgr1", approvalId);
    expect(first.approval?.status).toBe(ApprovalStatus.PENDING);
    expect(first.approval?.approvedBy).toEqual(["mgr1@example.com"]);
    const second = await approve("mgr2", approvalId);
    expect(second.approval?.status).toBe(ApprovalStatus.APPROVED);
    expect(second.approval?.approvedBy).toEqual(["mgr1@example.com", "mgr2@example.com"]);
    expect((await ask(approvalId))?.decision).toBe(Decision.ALLOW);
  });

  it("the owner plus an admin do not make two managers; nothing is recorded", async () => {
    const { approvalId } = await heldRefund();
    await expect(approve("owner", approvalId)).rejects.toMatchObject({ code: 7 });
    await expect(approve("admin", approvalId)).rejects.toMatchObject({ code: 7 });
    const { approval } = await as("admin").approvals.getApproval({ approvalId });
    expect(approval?.approvedBy).toEqual([]);
    expect(approval?.status).toBe(ApprovalStatus.PENDING);
  });

  it("a key whose principal the directory does not list neither sees nor approves", async () => {
    const { approvalId } = await heldRefund();
    await expect(approve("mgr3", approvalId)).rejects.toMatchObject({ code: 7 });
    const listed = await as("mgr3").approvals.listApprovals({ owner: "" });
    expect(listed.approvals.map((a) => a.id)).not.toContain(approvalId);
  });

  it("a directory manager lists the approvals held for its requirement, whoever owns them", async () => {
    const { approvalId } = await heldRefund();
    const listed = await as("mgr1").approvals.listApprovals({ owner: "" });
    expect(listed.approvals.map((a) => a.id)).toContain(approvalId);
  });

  it("a scoped approver counts only for its owners and teams", async () => {
    const ana = await heldRefund(OWNER);
    const ben = await heldRefund(OTHER);
    await expect(approve("scoped", ana.approvalId)).rejects.toMatchObject({ code: 7 });
    expect((await approve("scoped", ben.approvalId)).approval?.approvedBy).toEqual([
      "scoped@example.com",
    ]);
    // lead@ approves for the team "support", whose member is ana, not ben.
    expect((await approve("lead", ana.approvalId)).approval?.approvedBy).toEqual([
      "lead@example.com",
    ]);
    await expect(approve("lead", ben.approvalId)).rejects.toMatchObject({ code: 7 });
  });

  it("the requester never approves its own call, even listed as a manager", async () => {
    const { approvalId } = await heldRefund();
    const refused = approve("requester", approvalId);
    await expect(refused).rejects.toMatchObject({ code: 7 });
    await expect(refused).rejects.toThrow(/the requester never approves its own call/);
  });

  it("a role that names no requirement of the policy stops start-up", async () => {
    const bad = join(dir, "typo.yaml");
    writeFileSync(bad, "approvers:\n  mgr1@example.com: [manger]\n");
    await expect(startTestCharter({ config: { approvers: bad } })).rejects.toThrow(
      /the role approve:manger names no requirement of the policy/,
    );
  });
});

describe("the offline CLI with the demo's directory", () => {
  it("counts --by only for the directory's managers", async () => {
    const data = mkdtempSync(join(tmpdir(), "charter-approvers-cli-"));
    const env = { CHARTER_CONFIG: join(FIXTURES, "charter.yaml"), CHARTER_DATA_DIR: data };
    try {
      const token = (
        await runCapture(
          ["issue", "--profile", "owner-assistant", "--subject", SUBJECT, "--owner", OWNER],
          env,
        )
      ).out.trim();
      const args = JSON.stringify(REFUND);
      const held = await runCapture(
        ["check", "--token", token, "--tool", "issue_refund", "--args", args],
        env,
      );
      expect(held.code).toBe(2);
      const { approvalId } = JSON.parse(held.out) as { approvalId: string };
      const stranger = await runCapture(
        ["approvals", "approve", approvalId, "--by", "manager:lea"],
        env,
      );
      expect(stranger.code).not.toBe(0);
      expect(stranger.err).toContain("the approver directory does not give manager:lea");
      expect(
        (await runCapture(["approvals", "approve", approvalId, "--by", "mgr1@example.com"], env))
          .code,
      ).toBe(0);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
