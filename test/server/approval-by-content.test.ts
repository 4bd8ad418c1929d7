import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCharterClients } from "../../src/client/index.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { ApprovalStatus, Decision, Dialect } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// Issue 25: an approved call is found by its content. A call identical to an approved one (same
// grant, same call digest) uses that approval without presenting its id — from a new client, a
// new process, after a restart — exactly once, concurrent retries included; presenting the id
// still works; other arguments or another grant never do.
const OWNER = "ana@example.com";
let charter: TestCharter;
beforeAll(async () => {
  charter = await startTestCharter();
});
afterAll(async () => {
  await charter.stop();
});

const charge = (amount: number) =>
  JSON.stringify({
    customer_id: "cus_ABC123",
    amount,
    currency: "EUR",
    description: "Monthly plan",
    authorization_code: "CODE-1234",
  });

async function grant(c: TestCharter = charter): Promise<string> {
  return (
    await c.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "agent:worker-1",
      owner: OWNER,
      purpose: "approval by content",
    })
  ).grantToken;
}

async function ask(
  grantToken: string,
  argumentsJson: string,
  extra: {
    approvalId?: string;
    step?: { runId: string; of: { case: "toolCallId"; value: string } };
  } = {},
  c: TestCharter = charter,
) {
  // A fresh client each time: nothing is kept between the calls but the store.
  const client = createCharterClients({ address: `127.0.0.1:${c.server.port}` });
  try {
    const { verdict } = await client.authority.authorize({
      grantToken,
      call: {
        callId: "c-1",
        toolName: "charge_payment",
        argumentsJson,
        ...(extra.step ? { step: extra.step } : {}),
      },
      ...(extra.approvalId === undefined ? {} : { approvalId: extra.approvalId }),
    });
    if (!verdict) throw new Error("no verdict");
    return verdict;
  } finally {
    client.close();
  }
}

async function approve(approvalId: string, c: TestCharter = charter) {
  const { approval } = await c.clients.approvals.decideApproval({
    approvalId,
    outcome: ApprovalOutcome.APPROVE,
    decidedBy: OWNER,
    note: "",
  });
  expect(approval?.status).toBe(ApprovalStatus.APPROVED);
}

describe("an approved call found by its content", () => {
  it("is allowed once without the approval id, then held again under a new approval", async () => {
    const token = await grant();
    const held = await ask(token, charge(40));
    expect(held.decision).toBe(Decision.REQUIRE_APPROVAL);
    // Asked again before anyone answered: the same pending approval.
    expect((await ask(token, charge(40))).approvalId).toBe(held.approvalId);
    await approve(held.approvalId);
    const allowed = await ask(token, charge(40));
    expect(allowed.decision).toBe(Decision.ALLOW);
    expect(allowed.approvalId).toBe(held.approvalId);
    expect(allowed.receipt).not.toBe("");
    const { approval } = await charter.clients.approvals.getApproval({
      approvalId: held.approvalId,
    });
    expect(approval?.status).toBe(ApprovalStatus.CONSUMED);
    const again = await ask(token, charge(40));
    expect(again.decision).toBe(Decision.REQUIRE_APPROVAL);
    expect(again.approvalId).not.toBe(held.approvalId);
  });

  it("never covers other arguments or another grant", async () => {
    const token = await grant();
    const held = await ask(token, charge(41));
    await approve(held.approvalId);
    const other = await ask(token, charge(42));
    expect(other.decision).toBe(Decision.REQUIRE_APPROVAL);
    expect(other.approvalId).not.toBe(held.approvalId);
    const elsewhere = await ask(await grant(), charge(41));
    expect(elsewhere.decision).toBe(Decision.REQUIRE_APPROVAL);
    expect(elsewhere.approvalId).not.toBe(held.approvalId);
    // Still there for the call it approved.
    expect((await ask(token, charge(41))).decision).toBe(Decision.ALLOW);
  });

  it("presenting the id still works, once", async () => {
    const token = await grant();
    const held = await ask(token, charge(43));
    await approve(held.approvalId);
    expect((await ask(token, charge(43), { approvalId: held.approvalId })).decision).toBe(
      Decision.ALLOW,
    );
    const used = await ask(token, charge(43), { approvalId: held.approvalId });
    expect(used.decision).toBe(Decision.DENY);
    expect(used.reason?.code).toBe("APPROVAL_CONSUMED");
  });

  it("twenty concurrent retries without the id: exactly one allowed", async () => {
    const token = await grant();
    const held = await ask(token, charge(44));
    await approve(held.approvalId);
    const verdicts = await Promise.all(Array.from({ length: 20 }, () => ask(token, charge(44))));
    const allowed = verdicts.filter((v) => v.decision === Decision.ALLOW);
    expect(allowed).toHaveLength(1);
    // The others are told the approval was used, or asked for a new one; none runs.
    for (const v of verdicts.filter((x) => x.decision !== Decision.ALLOW)) {
      if (v.decision === Decision.DENY) expect(v.reason?.code).toBe("APPROVAL_CONSUMED");
      else expect(v.decision).toBe(Decision.REQUIRE_APPROVAL);
    }
  });

  it("a held step asked again after the approval is allowed once, then replays its allow", async () => {
    const token = await grant();
    const step = { runId: "run-1", of: { case: "toolCallId" as const, value: "call_1" } };
    const held = await ask(token, charge(45), { step });
    expect(held.decision).toBe(Decision.REQUIRE_APPROVAL);
    expect((await ask(token, charge(45), { step })).approvalId).toBe(held.approvalId);
    await approve(held.approvalId);
    const allowed = await ask(token, charge(45), { step });
    expect(allowed.decision).toBe(Decision.ALLOW);
    const replayed = await ask(token, charge(45), { step });
    expect(replayed.decision).toBe(Decision.ALLOW);
    expect(replayed.decisionId).toBe(allowed.decisionId);
  });

  it("AuthorizeTurn without approval_ids runs the approved call once", async () => {
    const token = await grant();
    const turn = JSON.stringify({
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_a",
          type: "function",
          function: { name: "charge_payment", arguments: charge(46) },
        },
      ],
    });
    const turnOf = async () =>
      (
        await charter.clients.authority.authorizeTurn({
          grantToken: token,
          dialect: Dialect.OPENAI_CHAT,
          turnJson: turn,
        })
      ).verdicts[0];
    const held = await turnOf();
    expect(held?.decision).toBe(Decision.REQUIRE_APPROVAL);
    await approve(held?.approvalId ?? "");
    expect((await turnOf())?.decision).toBe(Decision.ALLOW);
    expect((await turnOf())?.decision).toBe(Decision.REQUIRE_APPROVAL);
  });

  it("survives a restart: a new server on the same store allows the approved call once", async () => {
    const first = await startTestCharter();
    const token = await grant(first);
    const held = await ask(token, charge(47), {}, first);
    await approve(held.approvalId, first);
    await first.stop({ keepData: true });
    const second = await startTestCharter({ dataDir: first.dataDir });
    try {
      expect((await ask(token, charge(47), {}, second)).decision).toBe(Decision.ALLOW);
      expect((await ask(token, charge(47), {}, second)).decision).toBe(Decision.REQUIRE_APPROVAL);
    } finally {
      await second.stop();
    }
  });
});
