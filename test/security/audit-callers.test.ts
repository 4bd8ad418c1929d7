import { randomBytes } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey, readAuditRecords, type AuditEntry } from "../../src/authority/index.js";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// Issue 9 meets issue 8: refused callers are on the audit log (never their credential), and the
// records of what an authenticated caller asked for carry its principal.

let charter: TestCharter;
let issuerKey: string;
let gatewayKey: string;
const clientsFor = (secret?: string): CharterClients =>
  createCharterClients({
    address: `127.0.0.1:${charter.server.port}`,
    ...(secret === undefined ? {} : { metadata: { authorization: `Bearer ${secret}` } }),
  });

beforeAll(async () => {
  charter = await startTestCharter();
  // Out of protected mode: a key exists, so every caller must present one.
  issuerKey = (
    await createApiKey(charter.server.context, { principal: "orchestrator-1", roles: ["issuer"] })
  ).secret;
  gatewayKey = (
    await createApiKey(charter.server.context, { principal: "gateway-1", roles: ["gateway"] })
  ).secret;
});
afterAll(() => charter.stop());

async function recordsAfter(seq: number): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const r of readAuditRecords(charter.server.context, seq)) out.push(r.entry);
  return out;
}
const head = async () => (await charter.server.context.store.auditHead())?.seq ?? 0;

describe("refused callers are audited", () => {
  it("records UNAUTHENTICATED with the RPC and why, for no key and for a wrong key — never the key itself", async () => {
    const before = await head();
    const wrong = `chk_${randomBytes(32).toString("base64url")}`;
    for (const clients of [clientsFor(), clientsFor(wrong)]) {
      try {
        await expect(
          clients.grants.issueGrant({ profile: "receptionist", subject: "s", owner: "o" }),
        ).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
      } finally {
        clients.close();
      }
    }
    const records = await recordsAfter(before);
    expect(records.map((r) => [r.kind, r.rpc, r.detail])).toEqual([
      ["call.unauthenticated", "/charter.v1.GrantService/IssueGrant", "no credentials"],
      [
        "call.unauthenticated",
        "/charter.v1.GrantService/IssueGrant",
        "an unknown, revoked or malformed API key",
      ],
    ]);
    expect(JSON.stringify(records)).not.toContain(wrong);
    expect(JSON.stringify(records)).not.toContain(wrong.slice(4, 20));
  });

  it("records PERMISSION_DENIED with the caller's principal and the role it lacks", async () => {
    const before = await head();
    const clients = clientsFor(gatewayKey);
    try {
      await expect(
        clients.grants.issueGrant({ profile: "receptionist", subject: "s", owner: "o" }),
      ).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
    } finally {
      clients.close();
    }
    expect(await recordsAfter(before)).toEqual([
      expect.objectContaining({
        kind: "call.permission_denied",
        rpc: "/charter.v1.GrantService/IssueGrant",
        caller: "gateway-1",
        detail: "needs the role issuer (or admin)",
      }),
    ]);
    expect(JSON.stringify(await recordsAfter(before))).not.toContain(gatewayKey);
  });
});

describe("records carry the authenticated caller", () => {
  it("names the issuer on the grant record and the gateway on each decision record (and in the decision row)", async () => {
    const before = await head();
    const issuer = clientsFor(issuerKey);
    const gateway = clientsFor(gatewayKey);
    try {
      const { grantToken, grant } = await issuer.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:a",
        owner: "ana@example.com",
        purpose: "audit",
      });
      const { verdict } = await gateway.authority.authorize({
        grantToken,
        call: { callId: "c1", toolName: "web_search", argumentsJson: '{"query":"x"}' },
      });
      const { verdicts } = await gateway.authority.batchAuthorize({
        grantToken,
        items: [
          { call: { callId: "c2", toolName: "run_shell", argumentsJson: '{"command":"ls"}' } },
        ],
      });
      await issuer.grants.revokeGrant({ grantId: grant?.id ?? "", reason: "done" });
      const records = await recordsAfter(before);
      expect(records.map((r) => [r.kind, r.caller, r.decisionId ?? r.grantId])).toEqual([
        ["grant.issued", "orchestrator-1", grant?.id],
        ["decision", "gateway-1", verdict?.decisionId],
        ["decision", "gateway-1", verdicts[0]?.decisionId],
        ["grant.revoked", "orchestrator-1", grant?.id],
      ]);
      expect(
        await charter.server.context.store.getDecision(verdict?.decisionId ?? ""),
      ).toMatchObject({ caller: "gateway-1" });
      // The caller is who asked, never a credential.
      expect(JSON.stringify(records)).not.toContain(gatewayKey);
    } finally {
      issuer.close();
      gateway.close();
    }
  });
});
