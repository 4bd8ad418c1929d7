import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { ApprovalStatus, Decision } from "../../src/gen/charter/v1/common_pb.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";

// Issue 25, scoped endorsements, over gRPC against a real server (protected mode: the approver
// is named, and the demo's approver directory says who approves "manager"): after approving a
// call, its approver endorses calls like it within bounds for K calls; those run without
// prompts until K, and only under the same grant, action and requirement.
const OWNER = "ana@example.com";
let charter: TestCharter;
beforeAll(async () => {
  charter = await startTestCharter({ config: { approvers: `${FIXTURES}approvers.yaml` } });
});
afterAll(async () => {
  await charter.stop();
});

async function grant() {
  const issued = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:worker-1",
    owner: OWNER,
    purpose: "endorsements",
  });
  return { token: issued.grantToken, id: issued.grant?.id ?? "" };
}

const charge = (amount: number) =>
  JSON.stringify({ customer_id: "cus_ABC123", amount, currency: "EUR", description: "Plan" });
const refund = (amount: number) =>
  JSON.stringify({ order_id: "ord_A1B2C3", amount, currency: "EUR", reason: "damaged" });

async function ask(token: string, argumentsJson: string, toolName = "charge_payment") {
  const { verdict } = await charter.clients.authority.authorize({
    grantToken: token,
    call: { callId: `c-${argumentsJson.length}`, toolName, argumentsJson },
  });
  if (!verdict) throw new Error("no verdict");
  return verdict;
}

const approve = (approvalId: string, decidedBy = OWNER) =>
  charter.clients.approvals.decideApproval({
    approvalId,
    outcome: ApprovalOutcome.APPROVE,
    decidedBy,
    note: "",
  });

const endorse = (approvalId: string, endorsedBy = OWNER, maxCalls = 3, maximum = 50) =>
  charter.clients.approvals.endorseApproval({
    approvalId,
    boundsJson: JSON.stringify({ properties: { amount: { maximum } } }),
    maxCalls,
    ttlSeconds: 600n,
    endorsedBy,
  });

/** A held call approved by its owner and endorsed for `k` more calls up to 50. */
async function endorsed(token: string, k: number, first = 10) {
  const held = await ask(token, charge(first));
  expect(held.decision).toBe(Decision.REQUIRE_APPROVAL);
  await approve(held.approvalId);
  const { endorsement } = await endorse(held.approvalId, OWNER, k);
  return endorsement;
}

async function pendingCount() {
  const { approvals } = await charter.clients.approvals.listApprovals({
    owner: OWNER,
    status: ApprovalStatus.PENDING,
    pageSize: 500,
  });
  return approvals.length;
}

describe("scoped endorsements over gRPC", () => {
  it("allows similar calls within bounds without prompts until K, then holds the K+1-th", async () => {
    const g = await grant();
    const e = await endorsed(g.token, 3);
    expect(e).toMatchObject({ grantId: g.id, actionId: "payment.charge", maxCalls: 3 });
    expect(e?.id).toMatch(/^end_/);
    const before = await pendingCount();
    for (const amount of [11, 12, 13]) {
      const v = await ask(g.token, charge(amount));
      expect(v.decision).toBe(Decision.ALLOW);
      expect(v.receipt).not.toBe("");
    }
    expect(await pendingCount()).toBe(before);
    expect((await ask(g.token, charge(14))).decision).toBe(Decision.REQUIRE_APPROVAL);
    const { endorsements } = await charter.clients.approvals.listEndorsements({ owner: OWNER });
    expect(endorsements.find((x) => x.id === e?.id)).toMatchObject({ usedCalls: 3 });
  });

  it("holds a call outside the bounds, and a call under another grant", async () => {
    const g = await grant();
    await endorsed(g.token, 5);
    expect((await ask(g.token, charge(60))).decision).toBe(Decision.REQUIRE_APPROVAL);
    const other = await grant();
    expect((await ask(other.token, charge(11))).decision).toBe(Decision.REQUIRE_APPROVAL);
    expect((await ask(g.token, charge(11))).decision).toBe(Decision.ALLOW);
  });

  it("holds a call of a sub-agent's grant delegated from the endorsed one", async () => {
    const g = await grant();
    const mail = (to: string) => JSON.stringify({ to, subject: "Hello", body: "Hi" });
    const held = await ask(g.token, mail("a@customers.test"), "send_email");
    expect(held.decision).toBe(Decision.REQUIRE_APPROVAL);
    await approve(held.approvalId);
    await charter.clients.approvals.endorseApproval({
      approvalId: held.approvalId,
      boundsJson: JSON.stringify({ properties: { to: { pattern: "@customers\\.test$" } } }),
      maxCalls: 5,
      ttlSeconds: 600n,
      endorsedBy: OWNER,
    });
    const { grantToken } = await charter.clients.grants.delegateGrant({
      parentToken: g.token,
      subject: "agent:child",
      allowed: ["email.send"],
    });
    const child = await ask(grantToken, mail("b@customers.test"), "send_email");
    expect(child.decision).toBe(Decision.REQUIRE_APPROVAL);
    expect((await ask(g.token, mail("b@customers.test"), "send_email")).decision).toBe(
      Decision.ALLOW,
    );
  });

  it("meets a 2-manager requirement only with two endorsers", async () => {
    const g = await grant();
    const held = await ask(g.token, refund(250), "issue_refund");
    expect(held).toMatchObject({ decision: Decision.REQUIRE_APPROVAL, requirement: "manager" });
    await approve(held.approvalId, "mgr1@example.com");
    await endorse(held.approvalId, "mgr1@example.com", 5, 1000);
    expect((await ask(g.token, refund(260), "issue_refund")).decision).toBe(
      Decision.REQUIRE_APPROVAL,
    );
    await approve(held.approvalId, "mgr2@example.com");
    await endorse(held.approvalId, "mgr2@example.com", 5, 1000);
    const v = await ask(g.token, refund(270), "issue_refund");
    expect(v.decision).toBe(Decision.ALLOW);
    const { approval } = await charter.clients.approvals.getApproval({ approvalId: v.approvalId });
    expect(approval?.approvedBy).toEqual(["mgr1@example.com", "mgr2@example.com"]);
    expect(approval?.decidedBy).toMatch(/^endorsement:end_.+,end_/);
  });

  it("never turns a deny into an allow, whatever the bounds", async () => {
    const g = await grant();
    const held = await ask(g.token, refund(400), "issue_refund");
    for (const m of ["mgr1@example.com", "mgr2@example.com"]) {
      await approve(held.approvalId, m);
      await endorse(held.approvalId, m, 5, 100000);
    }
    const denied = await ask(g.token, refund(6000), "issue_refund");
    expect(denied.decision).toBe(Decision.DENY);
    expect(denied.reason?.code).toBe("RULE_DENY");
    expect((await ask(g.token, refund(401), "issue_refund")).decision).toBe(Decision.ALLOW);
  });

  it("refuses an endorser who could not approve, one who did not approve, and bounds too narrow", async () => {
    const g = await grant();
    const held = await ask(g.token, refund(300), "issue_refund");
    await approve(held.approvalId, "mgr1@example.com");
    await expect(endorse(held.approvalId, OWNER, 5, 1000)).rejects.toThrow(
      /PERMISSION_DENIED.*approve:manager/,
    );
    await expect(endorse(held.approvalId, "mgr2@example.com", 5, 1000)).rejects.toThrow(
      /FAILED_PRECONDITION.*has not approved/,
    );
    await expect(endorse(held.approvalId, "mgr1@example.com", 5, 100)).rejects.toThrow(
      /INVALID_ARGUMENT.*own arguments/,
    );
    await expect(endorse(held.approvalId, "mgr1@example.com", 101, 1000)).rejects.toThrow(
      /INVALID_ARGUMENT.*max_calls/,
    );
    const { endorsements } = await charter.clients.approvals.listEndorsements({ owner: OWNER });
    expect(endorsements.filter((e) => e.approvalId === held.approvalId)).toEqual([]);
  });

  it("stops at once when revoked", async () => {
    const g = await grant();
    const e = await endorsed(g.token, 5);
    expect((await ask(g.token, charge(21))).decision).toBe(Decision.ALLOW);
    const { endorsement } = await charter.clients.approvals.revokeEndorsement({
      endorsementId: e?.id ?? "",
      revokedBy: OWNER,
    });
    expect(endorsement).toMatchObject({ revokedBy: OWNER, usedCalls: 1 });
    expect((await ask(g.token, charge(22))).decision).toBe(Decision.REQUIRE_APPROVAL);
    const active = await charter.clients.approvals.listEndorsements({
      owner: OWNER,
      activeOnly: true,
    });
    expect(active.endorsements.map((x) => x.id)).not.toContain(e?.id);
  });

  it("allows exactly K of 20 concurrent calls under a K=5 endorsement", async () => {
    const g = await grant();
    await endorsed(g.token, 5);
    const verdicts = await Promise.all(
      Array.from({ length: 20 }, (_, i) => ask(g.token, charge(30 + i / 10))),
    );
    const allowed = verdicts.filter((v) => v.decision === Decision.ALLOW);
    expect(allowed).toHaveLength(5);
    expect(verdicts.filter((v) => v.decision === Decision.REQUIRE_APPROVAL)).toHaveLength(15);
  });
});

describe("an endorsement is judged by who its endorser is now", () => {
  it("stops counting once its endorser is dropped from the approver directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "charter-endorse-dir-"));
    const file = join(dir, "approvers.yaml");
    const both = "approvers:\n  mgr1@example.com: [manager]\n  mgr2@example.com: [manager]\n";
    writeFileSync(file, both);
    const served = await startTestCharter({ config: { approvers: file } });
    try {
      const { grantToken } = await served.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:worker-1",
        owner: OWNER,
        purpose: "endorsements",
      });
      const askRefund = async (amount: number) =>
        (
          await served.clients.authority.authorize({
            grantToken,
            call: {
              callId: `r-${amount}`,
              toolName: "issue_refund",
              argumentsJson: refund(amount),
            },
          })
        ).verdict;
      const held = await askRefund(250);
      for (const manager of ["mgr1@example.com", "mgr2@example.com"]) {
        await served.clients.approvals.decideApproval({
          approvalId: held?.approvalId ?? "",
          outcome: ApprovalOutcome.APPROVE,
          decidedBy: manager,
          note: "",
        });
        await served.clients.approvals.endorseApproval({
          approvalId: held?.approvalId ?? "",
          boundsJson: JSON.stringify({ properties: { amount: { maximum: 1000 } } }),
          maxCalls: 5,
          ttlSeconds: 600n,
          endorsedBy: manager,
        });
      }
      expect((await askRefund(260))?.decision).toBe(Decision.ALLOW);
      writeFileSync(file, "approvers:\n  mgr1@example.com: [manager]\n");
      await served.server.context.reload();
      expect((await askRefund(270))?.decision).toBe(Decision.REQUIRE_APPROVAL);
      writeFileSync(file, both);
      await served.server.context.reload();
      expect((await askRefund(280))?.decision).toBe(Decision.ALLOW);
    } finally {
      await served.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
