import { readFileSync, rmSync } from "node:fs";
import { credentials, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueGrant } from "../../src/authority/index.js";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { makeTestPki, type TestPki } from "../support/certs.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// Mutual TLS: client certificates the configured CA signed are accepted and mapped to principals
// by their subject CN; any other client is refused in the handshake.

let pki: TestPki;
let charter: TestCharter;
const open: CharterClients[] = [];

beforeAll(async () => {
  pki = makeTestPki();
  charter = await startTestCharter({
    config: {
      tlsCert: pki.serverCert,
      tlsKey: pki.serverKey,
      tlsClientCa: pki.caCert,
      tlsClientRoles: "gateway-1=gateway;orchestrator-1=issuer",
    },
  });
});
afterAll(async () => {
  for (const c of open) c.close();
  await charter.stop();
  rmSync(pki.dir, { recursive: true, force: true });
});

function clientsWith(cert?: { cert: string; key: string }): CharterClients {
  const ca = readFileSync(pki.caCert);
  const creds = cert
    ? credentials.createSsl(ca, Buffer.from(cert.key), Buffer.from(cert.cert))
    : credentials.createSsl(ca);
  const clients = createCharterClients({
    address: `localhost:${charter.server.port}`,
    credentials: creds,
  });
  open.push(clients);
  return clients;
}

const search = (grantToken: string) => ({
  grantToken,
  call: { callId: "c1", toolName: "web_search", argumentsJson: '{"query":"charter"}' },
});
const issue = {
  profile: "owner-assistant",
  subject: "agent:a",
  owner: "ana@example.com",
  purpose: "p",
};

describe("mutual TLS", () => {
  it("accepts a trusted client certificate and gives it the roles of its CN", async () => {
    const { token } = await issueGrant(charter.server.context, issue);
    const gateway = clientsWith(pki.client("gateway-1"));
    const { verdict } = await gateway.authority.authorize(search(token));
    expect(verdict?.decision).toBe(Decision.ALLOW);
    await expect(gateway.grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.PERMISSION_DENIED,
    });
    await expect(
      clientsWith(pki.client("orchestrator-1")).grants.issueGrant(issue),
    ).resolves.toBeDefined();
  });

  it("gives a trusted certificate whose CN is not mapped no role", async () => {
    await expect(clientsWith(pki.client("intern")).grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.PERMISSION_DENIED,
    });
  });

  it("refuses a client whose certificate another CA signed, and one without a certificate, before any RPC", async () => {
    for (const clients of [clientsWith(pki.stranger("gateway-1")), clientsWith()]) {
      await expect(clients.keys.getJwks({}, { timeoutMs: 3_000 })).rejects.toMatchObject({
        code: status.UNAVAILABLE,
      });
    }
  });

  it("refuses plaintext callers", async () => {
    await expect(charter.clients.keys.getJwks({}, { timeoutMs: 3_000 })).rejects.toMatchObject({
      code: status.UNAVAILABLE,
    });
  });
});
