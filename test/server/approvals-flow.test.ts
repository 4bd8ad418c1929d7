import { toJsonString } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ApprovalEventKind,
  ApprovalOutcome,
  type WatchApprovalsResponse,
} from "../../src/gen/charter/v1/approval_pb.js";
import {
  ApprovalSchema,
  ApprovalStatus,
  ArgumentDisplay,
  Decision,
} from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { within } from "../support/grpc.js";

// The whole approval flow over gRPC, on the demo catalog and policy, with a clock the test moves.
const T0 = Math.floor(Date.now() / 1000);
let now = T0;
let charter: TestCharter;
beforeAll(async () => {
  charter = await startTestCharter({ now: () => now });
});
afterAll(async () => {
  await charter.stop();
});

const OWNER = "ana@example.com";
const SECRET = "SECRET-9876-do-not-show";

async function issue(owner = OWNER) {
  return charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:worker-1",
    owner,
    purpose: "approval flow",
  });
}

const charge = (amount: number) =>
  JSON.stringify({
    customer_id: "cus_ABC123",
    amount,
    currency: "EUR",
    description: "Monthly plan",
    authorization_code: SECRET,
  });
const refund = (amount: number) =>
  JSON.stringify({
    order_id: "ord_A1B2C3",
    amount,
    currency: "EUR",
    reason: "damaged",
    note: "customer called twice",
  });

async function ask(
  grantToken: string,
  argumentsJson: string,
  approvalId?: string,
  toolName = "charge_payment",
) {
  const { verdict } = await charter.clients.authority.authorize({
    grantToken,
    call: { callId: "c-1", toolName, argumentsJson },
    ...(approvalId === undefined ? {} : { approvalId }),
  });
  if (!verdict) throw new Error("no verdict");
  return verdict;
}

async function decide(approvalId: string, outcome: ApprovalOutcome, decidedBy = OWNER) {
  const { approval } = await charter.clients.approvals.decideApproval({
    approvalId,
    outcome,
    decidedBy,
    note: "checked",
  });
  return approval;
}

describe("approvals over gRPC", () => {
  it("require_approval -> ListApprovals (safe summary) -> approve -> allowed once -> APPROVAL_CONSUMED", async () => {
    const { grantToken, grant } = await issue();
    const held = await ask(grantToken, charge(42));
    expect(held).toMatchObject({
      decision: Decision.REQUIRE_APPROVAL,
      requirement: "owner",
      receipt: "",
    });
    expect(held.approvalId).toMatch(/^apr_/);
    // Asking again for the same call answers the same pending approval.
    expect((await ask(grantToken, charge(42))).approvalId).toBe(held.approvalId);

    const { approvals } = await charter.clients.approvals.listApprovals({
      owner: OWNER,
      status: ApprovalStatus.PENDING,
    });
    const listed = approvals.find((a) => a.id === held.approvalId);
    expect(listed).toMatchObject({
      grantId: grant?.id,
      owner: OWNER,
      actionId: "payment.charge",
      toolName: "charge_payment",
      requiredApprovals: 1,
      callDigest: held.callDigest,
    });
    const shown = Object.fromEntries((listed?.summary ?? []).map((s) => [s.path, s]));
    expect(shown["/amount"]).toMatchObject({ display: ArgumentDisplay.VALUE, valueJson: "42" });
    expect(shown["/customer_id"]).toMatchObject({
      display: ArgumentDisplay.VALUE,
      valueJson: '"cus_ABC123"',
    });
    expect(shown["/authorization_code"]).toMatchObject({
      display: ArgumentDisplay.HIDDEN,
      valueJson: "",
      digest: "",
    });
    expect(toJsonString(ApprovalSchema, listed ?? approvals[0] ?? ({} as never))).not.toContain(
      "SECRET-9876",
    );

    const approved = await decide(held.approvalId, ApprovalOutcome.APPROVE);
    expect(approved).toMatchObject({
      status: ApprovalStatus.APPROVED,
      approvedBy: [OWNER],
      decidedBy: OWNER,
      note: "checked",
    });

    const allowed = await ask(grantToken, charge(42), held.approvalId);
    expect(allowed).toMatchObject({ decision: Decision.ALLOW, approvalId: held.approvalId });
    expect(allowed.receipt.split(".")).toHaveLength(3);
    const again = await ask(grantToken, charge(42), held.approvalId);
    expect(again).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "APPROVAL_CONSUMED" },
      receipt: "",
    });
    expect(
      (await charter.clients.approvals.getApproval({ approvalId: held.approvalId })).approval
        ?.status,
    ).toBe(ApprovalStatus.CONSUMED);
  });

  it("shows unlisted arguments as digests and cuts long strings", async () => {
    const { grantToken } = await issue();
    const body = "b".repeat(500);
    const held = await ask(
      grantToken,
      JSON.stringify({ to: "x@elsewhere.org", subject: "s".repeat(120), body }),
      undefined,
      "send_email",
    );
    const approval = (await charter.clients.approvals.getApproval({ approvalId: held.approvalId }))
      .approval;
    const shown = Object.fromEntries((approval?.summary ?? []).map((s) => [s.path, s]));
    expect(shown["/body"]).toMatchObject({ display: ArgumentDisplay.DIGEST });
    expect(shown["/body"]?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(shown["/subject"]).toMatchObject({
      display: ArgumentDisplay.VALUE,
      truncated: true,
      valueJson: JSON.stringify("s".repeat(80)),
    });
    expect(JSON.stringify(approval?.summary.map((s) => s.valueJson))).not.toContain("bbbbbbbbbb");
  });

  it("denies APPROVAL_MISMATCH for a call with one argument changed", async () => {
    const { grantToken } = await issue();
    const held = await ask(grantToken, charge(50));
    await decide(held.approvalId, ApprovalOutcome.APPROVE);
    expect(await ask(grantToken, charge(51), held.approvalId)).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "APPROVAL_MISMATCH" },
    });
    // The approval is still there for the exact call.
    expect((await ask(grantToken, charge(50), held.approvalId)).decision).toBe(Decision.ALLOW);
  });

  it("denies APPROVAL_REJECTED after a rejection", async () => {
    const { grantToken } = await issue();
    const held = await ask(grantToken, charge(60));
    expect(await decide(held.approvalId, ApprovalOutcome.REJECT)).toMatchObject({
      status: ApprovalStatus.REJECTED,
    });
    expect(await ask(grantToken, charge(60), held.approvalId)).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "APPROVAL_REJECTED" },
    });
    await expect(decide(held.approvalId, ApprovalOutcome.APPROVE)).rejects.toMatchObject({
      code: 9,
      details: expect.stringContaining("is rejected, not pending") as unknown,
    });
  });

  it("denies APPROVAL_EXPIRED once the approval's time has run out, and records it expired", async () => {
    const { grantToken } = await issue();
    const held = await ask(grantToken, charge(70));
    await decide(held.approvalId, ApprovalOutcome.APPROVE);
    now += 301;
    try {
      expect(await ask(grantToken, charge(70), held.approvalId)).toMatchObject({
        decision: Decision.DENY,
        reason: { code: "APPROVAL_EXPIRED" },
      });
      expect(
        (await charter.clients.approvals.getApproval({ approvalId: held.approvalId })).approval
          ?.status,
      ).toBe(ApprovalStatus.EXPIRED);
    } finally {
      now = T0;
    }
  });

  it("needs two distinct approvers for the demo's 2-of-N manager requirement", async () => {
    const { grantToken } = await issue();
    const held = await ask(grantToken, refund(150), undefined, "issue_refund");
    expect(held).toMatchObject({ decision: Decision.REQUIRE_APPROVAL, requirement: "manager" });
    const first = await decide(held.approvalId, ApprovalOutcome.APPROVE, "manager:lea");
    expect(first).toMatchObject({
      status: ApprovalStatus.PENDING,
      requiredApprovals: 2,
      approvedBy: ["manager:lea"],
    });
    await expect(
      decide(held.approvalId, ApprovalOutcome.APPROVE, "manager:lea"),
    ).rejects.toMatchObject({ code: 9 });
    expect((await ask(grantToken, refund(150), held.approvalId, "issue_refund")).decision).toBe(
      Decision.REQUIRE_APPROVAL,
    );
    expect(await decide(held.approvalId, ApprovalOutcome.APPROVE, "manager:max")).toMatchObject({
      status: ApprovalStatus.APPROVED,
      approvedBy: ["manager:lea", "manager:max"],
    });
    expect((await ask(grantToken, refund(150), held.approvalId, "issue_refund")).decision).toBe(
      Decision.ALLOW,
    );
  });

  it("ends an approval superseded when its grant was revoked before the decision", async () => {
    const { grantToken, grant } = await issue();
    const held = await ask(grantToken, charge(80));
    // A revocation written by another process, whose own clean-up has not run: the re-check catches it.
    await charter.server.context.store.revokeGrant(grant?.id ?? "", "task cancelled", now);
    const approval = await decide(held.approvalId, ApprovalOutcome.APPROVE);
    expect(approval).toMatchObject({
      status: ApprovalStatus.SUPERSEDED,
      statusReason: { code: "GRANT_REVOKED" },
    });
    expect(await ask(grantToken, charge(80), held.approvalId)).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "GRANT_REVOKED" },
    });
  });

  it("supersedes the pending approvals of a grant when it is revoked (RevokeGrant's application function)", async () => {
    const { revokeGrant } = await import("../../src/authority/index.js");
    const { grantToken, grant } = await issue();
    const held = await ask(grantToken, charge(81));
    await revokeGrant(charter.server.context, { grantId: grant?.id ?? "", reason: "done" });
    expect(
      (await charter.clients.approvals.getApproval({ approvalId: held.approvalId })).approval,
    ).toMatchObject({
      status: ApprovalStatus.SUPERSEDED,
      statusReason: { code: "GRANT_REVOKED" },
    });
    await expect(decide(held.approvalId, ApprovalOutcome.APPROVE)).rejects.toMatchObject({
      code: 9,
    });
  });

  it("WatchApprovals delivers every event across a reconnect, without loss or duplicates", async () => {
    const owner = "watcher@example.com";
    const { grantToken } = await issue(owner);
    const seen: WatchApprovalsResponse[] = [];
    // Leaving the loop cancels the stream: the client "disconnects" after one event.
    const firstStream = (async () => {
      for await (const event of charter.clients.approvals.watchApprovals({ owner })) {
        seen.push(event);
        break;
      }
    })();
    await new Promise((r) => setTimeout(r, 100)); // the stream is open
    const held = await ask(grantToken, charge(90));
    await within(
      firstStream.catch(() => undefined),
      5000,
      "the created event",
    );
    expect(seen.map((e) => e.kind)).toEqual([ApprovalEventKind.CREATED]);
    const last = seen.at(-1)?.sequence ?? 0n;

    // While the watcher is away: decided, consumed.
    await decide(held.approvalId, ApprovalOutcome.APPROVE, owner);
    await ask(grantToken, charge(90), held.approvalId);

    const resumed: WatchApprovalsResponse[] = [];
    const second = new AbortController();
    const secondStream = (async () => {
      for await (const event of charter.clients.approvals.watchApprovals(
        { owner, afterSequence: last },
        { signal: second.signal },
      )) {
        resumed.push(event);
        if (resumed.length === 2) second.abort();
      }
    })();
    await within(
      secondStream.catch(() => undefined),
      5000,
      "the events after the reconnect",
    );
    expect(resumed.map((e) => [e.kind, e.approval?.status])).toEqual([
      [ApprovalEventKind.DECIDED, ApprovalStatus.APPROVED],
      [ApprovalEventKind.CONSUMED, ApprovalStatus.CONSUMED],
    ]);
    const sequences = [...seen, ...resumed].map((e) => e.sequence);
    expect(new Set(sequences).size).toBe(sequences.length);
    expect([...sequences].sort((a, b) => (a < b ? -1 : 1))).toEqual(sequences);
  });

  it("pages ListApprovals with opaque tokens", async () => {
    const owner = "pager@example.com";
    const { grantToken } = await issue(owner);
    for (let i = 1; i <= 5; i++) await ask(grantToken, charge(i));
    const ids: string[] = [];
    let pageToken = "";
    do {
      const page = await charter.clients.approvals.listApprovals({ owner, pageSize: 2, pageToken });
      ids.push(...page.approvals.map((a) => a.id));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(new Set(ids).size).toBe(5);
    await expect(
      charter.clients.approvals.listApprovals({ owner, pageToken: "not-a-token" }),
    ).rejects.toMatchObject({ code: 3 });
  });
});
