import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/authority/index.js";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";

// Scoped endorsements with caller authentication (API keys, the demo's approver directory): an
// authenticated caller endorses and revokes as its own principal (endorsed_by and revoked_by
// are ignored); only the endorser, the owner or an admin revokes; the requester never endorses.
const OWNER = "ana@example.com";
const SUBJECT = "agent:worker-1";
let charter: TestCharter;
const clients = new Map<string, CharterClients>();
const as = (name: string): CharterClients => {
  const c = clients.get(name);
  if (c === undefined) throw new Error(`no caller ${name}`);
  return c;
};

beforeAll(async () => {
  charter = await startTestCharter({ config: { approvers: `${FIXTURES}approvers.yaml` } });
  const address = `127.0.0.1:${charter.server.port}`;
  const keys: [string, string, string[]][] = [
    ["orchestrator", "orchestrator", ["issuer", "gateway"]],
    ["owner", OWNER, ["approver"]],
    ["admin", "ops", ["admin"]],
    ["mgr1", "mgr1@example.com", ["approver"]],
    ["mgr2", "mgr2@example.com", ["approver"]],
    ["stranger", "eve@example.com", ["approver"]],
    ["requester", SUBJECT, ["approve:owner"]],
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
});

async function session() {
  const { grantToken } = await as("orchestrator").grants.issueGrant({
    profile: "owner-assistant",
    subject: SUBJECT,
    owner: OWNER,
    purpose: "endorsements with keys",
  });
  return async (amount: number) =>
    (
      await as("orchestrator").authority.authorize({
        grantToken,
        call: {
          callId: `c-${amount}`,
          toolName: "charge_payment",
          argumentsJson: JSON.stringify({
            customer_id: "cus_ABC123",
            amount,
            currency: "EUR",
            description: "Plan",
          }),
        },
      })
    ).verdict;
}

const endorse = (who: string, approvalId: string) =>
  as(who).approvals.endorseApproval({
    approvalId,
    boundsJson: '{"properties":{"amount":{"maximum":50}}}',
    maxCalls: 5,
    ttlSeconds: 600n,
    endorsedBy: "mgr2@example.com",
  });

describe("endorsements with caller authentication", () => {
  it("endorses as the caller's own principal; a stranger may neither see nor revoke it", async () => {
    const ask = await session();
    const held = await ask(10);
    await as("owner").approvals.decideApproval({
      approvalId: held?.approvalId ?? "",
      outcome: ApprovalOutcome.APPROVE,
      decidedBy: "",
      note: "",
    });
    const { endorsement } = await endorse("owner", held?.approvalId ?? "");
    expect(endorsement?.endorsedBy).toBe(OWNER);
    expect((await ask(11))?.decision).toBe(Decision.ALLOW);

    const seen = await as("stranger").approvals.listEndorsements({ owner: "" });
    expect(seen.endorsements.map((e) => e.id)).not.toContain(endorsement?.id);
    await expect(
      as("stranger").approvals.revokeEndorsement({
        endorsementId: endorsement?.id ?? "",
        revokedBy: OWNER,
      }),
    ).rejects.toThrow(/PERMISSION_DENIED/);
    expect((await ask(12))?.decision).toBe(Decision.ALLOW);

    const { endorsement: revoked } = await as("admin").approvals.revokeEndorsement({
      endorsementId: endorsement?.id ?? "",
      revokedBy: OWNER,
    });
    expect(revoked?.revokedBy).toBe("ops");
    expect((await ask(13))?.decision).toBe(Decision.REQUIRE_APPROVAL);
  });

  it("refuses a manager for an owner requirement, and the requester for its own calls", async () => {
    const ask = await session();
    const held = await ask(20);
    await as("owner").approvals.decideApproval({
      approvalId: held?.approvalId ?? "",
      outcome: ApprovalOutcome.APPROVE,
      decidedBy: "",
      note: "",
    });
    await expect(endorse("mgr1", held?.approvalId ?? "")).rejects.toThrow(/PERMISSION_DENIED/);
    await expect(endorse("requester", held?.approvalId ?? "")).rejects.toThrow(
      /PERMISSION_DENIED.*requester never approves/,
    );
  });
});
