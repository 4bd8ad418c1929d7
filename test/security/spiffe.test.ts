import { readFileSync, rmSync } from "node:fs";
import { credentials, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createApiKey,
  issueGrant,
  readAuditRecords,
  type AuditEntry,
} from "../../src/authority/index.js";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { makeTestPki, type SvidOptions, type TestPki } from "../support/certs.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// SPIFFE callers: an X.509-SVID the client CA signed is named by its SPIFFE ID (its one URI SAN)
// and holds the roles tlsSpiffeRoles gives that ID, with no API key. Anything else that carries a
// SPIFFE ID is refused (UNAUTHENTICATED, on the audit log), never treated as a CN caller.

let pki: TestPki;
let charter: TestCharter;
const open: CharterClients[] = [];

const TD = "spiffe://prod.example";
const ORCHESTRATOR = `${TD}/agents/orchestrator`;
const GATEWAY = `${TD}/agents/gateway-7`;

beforeAll(async () => {
  pki = makeTestPki();
  charter = await startTestCharter({
    config: {
      tlsCert: pki.serverCert,
      tlsKey: pki.serverKey,
      tlsClientCa: pki.caCert,
      tlsClientRoles: "orchestrator-1=issuer",
      // Exact first: the orchestrator is an issuer, every other agent a gateway.
      tlsSpiffeRoles: `${ORCHESTRATOR}=issuer; ${TD}/agents/*=gateway; ${TD}/ops/auditor=auditor`,
      // Refusals are tallied per peer, RPC and reason: with a short interval each case's refusal is
      // the first of its key again (written at once), though several cases share a reason.
      auditRefusalIntervalMs: 20,
    },
  });
  // Out of protected mode for certain: a key exists, and the SVID callers below present none.
  await createApiKey(charter.server.context, { principal: "someone", roles: ["admin"] });
});
afterAll(async () => {
  for (const c of open) c.close();
  await charter.stop();
  rmSync(pki.dir, { recursive: true, force: true });
});

function clientsWith(cert: { cert: string; key: string }): CharterClients {
  const creds = credentials.createSsl(
    readFileSync(pki.caCert),
    Buffer.from(cert.key),
    Buffer.from(cert.cert),
  );
  const clients = createCharterClients({
    address: `localhost:${charter.server.port}`,
    credentials: creds,
  });
  open.push(clients);
  return clients;
}
const svid = (uris: readonly string[], options?: SvidOptions) =>
  clientsWith(pki.svid(uris, options));

const issue = {
  profile: "owner-assistant",
  subject: "agent:a",
  owner: "ana@example.com",
  purpose: "p",
};
const search = (grantToken: string, callId = "c1") => ({
  grantToken,
  call: { callId, toolName: "web_search", argumentsJson: '{"query":"charter"}' },
});

async function recordsAfter(seq: number): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const r of readAuditRecords(charter.server.context, seq)) out.push(r.entry);
  return out;
}
const head = async () => (await charter.server.context.store.auditHead())?.seq ?? 0;

describe("SPIFFE callers over mutual TLS", () => {
  it("gives an SVID the roles of its exact SPIFFE ID, with no API key", async () => {
    const orchestrator = svid([ORCHESTRATOR]);
    const { grantToken } = await orchestrator.grants.issueGrant(issue);
    expect(grantToken).not.toBe("");
    // Its exact entry wins over the agents/* entry: an issuer, not a gateway.
    await expect(orchestrator.authority.authorize(search(grantToken))).rejects.toMatchObject({
      code: status.PERMISSION_DENIED,
      details: expect.stringContaining("needs the role gateway") as unknown,
    });
  });

  it("gives an SVID under a /* entry that entry's roles", async () => {
    const { token } = await issueGrant(charter.server.context, issue);
    const gateway = svid([GATEWAY]);
    const { verdict } = await gateway.authority.authorize(search(token));
    expect(verdict?.decision).toBe(Decision.ALLOW);
    await expect(gateway.grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.PERMISSION_DENIED,
    });
    // Deeper paths are covered too; the prefix itself and its neighbours are not.
    const deeper = svid([`${TD}/agents/team-a/gw`]);
    expect((await deeper.authority.authorize(search(token, "c2"))).verdict?.decision).toBe(
      Decision.ALLOW,
    );
  });

  it.each([
    ["an ID no entry covers", `${TD}/other/gw`],
    ["the /* prefix itself", `${TD}/agents`],
    ["a segment that only starts like the prefix", `${TD}/agents-x/gw`],
    ["another trust domain", "spiffe://evil.example/agents/orchestrator"],
  ])("refuses an SVID whose SPIFFE ID is not mapped (%s)", async (_, id) => {
    const before = await head();
    await expect(svid([id]).grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
      details: "client certificate refused: a SPIFFE ID that tlsSpiffeRoles does not map",
    });
    expect(await recordsAfter(before)).toEqual([
      expect.objectContaining({
        kind: "call.unauthenticated",
        caller: id,
        detail: "a SPIFFE ID that tlsSpiffeRoles does not map",
      }),
    ]);
  });

  it("names an SVID by its SPIFFE ID alone: a mapped CN does not rescue an unmapped ID", async () => {
    await expect(
      svid([`${TD}/other/x`], { cn: "orchestrator-1" }).grants.issueGrant(issue),
    ).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    // The same CN without a SPIFFE ID is the CN caller it always was.
    await expect(
      clientsWith(pki.client("orchestrator-1")).grants.issueGrant(issue),
    ).resolves.toBeDefined();
  });

  it.each([
    ["two SPIFFE IDs, both mapped", [ORCHESTRATOR, GATEWAY], "more than one URI SAN"],
    ["a SPIFFE ID and another URI", [ORCHESTRATOR, "https://prod.example/x"], "more than one URI"],
    ["a URI SAN holding two IDs", [`${ORCHESTRATOR}, URI:${GATEWAY}`], "path segment"],
  ])("refuses a certificate with %s", async (_, uris, why) => {
    await expect(svid(uris).grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
      details: expect.stringContaining(why) as unknown,
    });
  });

  it.each([
    ["SPIFFE://prod.example/agents/orchestrator", "does not start with spiffe://"],
    ["spiffe://Prod.example/agents/orchestrator", "trust domain with other than lowercase"],
    ["spiffe://prod.example/agents/orchestrator?x=1", "query or a fragment"],
    ["spiffe://prod.example/agents/orchestrator#f", "query or a fragment"],
    ["spiffe://ops@prod.example/agents/orchestrator", "userinfo"],
    ["spiffe://prod.example:8443/agents/orchestrator", "port"],
    ["spiffe://prod.example/agents//orchestrator", "empty path segment"],
    ["spiffe://prod.example/agents/orchestrator/", "empty path segment"],
    ["spiffe://prod.example/agents/../agents/orchestrator", ". or .. path segment"],
    ["spiffe://prod.example/agents/./orchestrator", ". or .. path segment"],
    ["spiffe://prod.example/agents/orch%65strator", "path segment with other than"],
    ["spiffe:///agents/orchestrator", "no trust domain"],
    [`spiffe://prod.example/agents/${"a".repeat(2049)}`, "longer than 2048 bytes"],
    ["spiffe://prod.example", "has no path"],
  ])("refuses a malformed SPIFFE ID: %s", async (id, why) => {
    const before = await head();
    await expect(svid([id]).grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
      details: expect.stringContaining(why) as unknown,
    });
    const records = await recordsAfter(before);
    expect(records).toEqual([
      expect.objectContaining({
        kind: "call.unauthenticated",
        detail: expect.any(String) as unknown,
      }),
    ]);
    // A malformed ID is never recorded as the caller.
    expect(records[0]?.caller).toBeUndefined();
  });

  it("refuses a CA certificate that carries a mapped SPIFFE ID", async () => {
    await expect(svid([ORCHESTRATOR], { ca: true }).grants.issueGrant(issue)).rejects.toMatchObject(
      {
        code: status.UNAUTHENTICATED,
        details: expect.stringContaining("a CA certificate") as unknown,
      },
    );
  });

  it("refuses an SVID with a mapped SPIFFE ID that another CA signed, in the handshake", async () => {
    await expect(
      svid([ORCHESTRATOR], { stranger: true }).grants.issueGrant(issue, { timeoutMs: 3_000 }),
    ).rejects.toMatchObject({ code: status.UNAVAILABLE });
  });

  it("names the SPIFFE ID on the grant and decision records, as a CN caller is named", async () => {
    const before = await head();
    const { grantToken, grant } = await svid([ORCHESTRATOR]).grants.issueGrant(issue);
    const { verdict } = await svid([GATEWAY]).authority.authorize(search(grantToken, "c9"));
    const records = await recordsAfter(before);
    expect(records.map((r) => [r.kind, r.caller, r.decisionId ?? r.grantId])).toEqual([
      ["grant.issued", ORCHESTRATOR, grant?.id],
      ["decision", GATEWAY, verdict?.decisionId],
    ]);
    expect(await charter.server.context.store.getDecision(verdict?.decisionId ?? "")).toMatchObject(
      { caller: GATEWAY },
    );
  });
});
