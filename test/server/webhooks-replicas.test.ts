import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { WEBHOOK_LEASE_META } from "../../src/authority/index.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { describePostgres, testSchema } from "../support/postgres.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

// Two replicas on one PostgreSQL schema, both configured with the same webhook: the lease in
// the meta table lets one deliver, and the other takes over when it stops.

describePostgres("webhooks with two PostgreSQL replicas", () => {
  const schema = testSchema("webhooks");
  let dir: string;
  let receiver: WebhookReceiver;
  let a: TestCharter;
  let b: TestCharter;

  beforeAll(async () => {
    await schema.create();
    dir = mkdtempSync(join(tmpdir(), "charter-webhook-replicas-"));
    receiver = await startWebhookReceiver();
    process.env["CHARTER_TEST_REPLICA_SECRET"] = "replica-webhook-secret-0123456789";
    writeFileSync(
      join(dir, "webhooks.yaml"),
      `webhooks:\n  - { name: ops, url: "${receiver.url}/ops", format: json, secretEnv: CHARTER_TEST_REPLICA_SECRET, events: [created] }\ndelivery: { pollMs: 200, retryInitialMs: 50, retryMaxMs: 200 }\n`,
    );
    const config = { database: schema.url, webhooks: join(dir, "webhooks.yaml") };
    a = await startTestCharter({ config });
    b = await startTestCharter({ config });
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
    await receiver.close();
    await schema.drop();
    rmSync(dir, { recursive: true, force: true });
    delete process.env["CHARTER_TEST_REPLICA_SECRET"];
  });

  async function hold(via: TestCharter, amount: number): Promise<string> {
    const { grantToken } = await via.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "agent:replica",
      owner: "ana@example.com",
      purpose: "replicas",
    });
    const { verdict } = await via.clients.authority.authorize({
      grantToken,
      call: {
        callId: `c-${amount}`,
        toolName: "charge_payment",
        argumentsJson: JSON.stringify({
          customer_id: "cus_ABC123",
          amount,
          currency: "EUR",
          description: "replicas",
        }),
      },
    });
    expect(verdict?.decision).toBe(Decision.REQUIRE_APPROVAL);
    return verdict?.approvalId ?? "";
  }
  const createdFor = (id: string) =>
    receiver.received.filter((r) => r.path === "/ops" && r.body.includes(id));

  it("delivers events made through either replica, once, by the lease holder", async () => {
    const ids = [await hold(a, 21), await hold(b, 22), await hold(a, 23)];
    for (const id of ids) await receiver.waitFor((r) => r.body.includes(id), `created ${id}`);
    await new Promise((r) => setTimeout(r, 500));
    expect(ids.map((id) => createdFor(id).length)).toEqual([1, 1, 1]);
    const lease = JSON.parse(
      (await a.server.context.store.readMeta(WEBHOOK_LEASE_META)) ?? "{}",
    ) as { holder?: unknown };
    expect(typeof lease.holder).toBe("string");
  });

  it("is delivered by the other replica once the holder stops (each one stopped in turn)", async () => {
    const config = { database: schema.url, webhooks: join(dir, "webhooks.yaml") };
    // Whichever holds the lease, one of the two turns is a takeover.
    await a.stop();
    const viaB = await hold(b, 24);
    await receiver.waitFor((r) => r.body.includes(viaB), "created with a stopped");
    a = await startTestCharter({ config });
    await b.stop();
    const viaA = await hold(a, 25);
    await receiver.waitFor((r) => r.body.includes(viaA), "created with b stopped");
    b = await startTestCharter({ config });
    expect([createdFor(viaB).length, createdFor(viaA).length]).toEqual([1, 1]);
  });
});
