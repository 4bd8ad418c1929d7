import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { serveProcess, type ServedProcess } from "../support/serve-process.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

// `charter serve --workers 2` with a webhook: approvals made through either worker are delivered
// by one process (worker 1), each once.

const dir = mkdtempSync(join(tmpdir(), "charter-workers-webhooks-"));
let receiver: WebhookReceiver;
let served: ServedProcess;
const clients: CharterClients[] = [];

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  writeFileSync(
    join(dir, "webhooks.yaml"),
    `webhooks:\n  - { name: ops, url: "${receiver.url}/ops", format: json, secretEnv: CHARTER_TEST_WORKERS_SECRET, events: [created] }\n`,
  );
  served = await serveProcess({
    dataDir: join(dir, "data"),
    args: ["--workers", "2"],
    env: {
      CHARTER_WEBHOOKS: join(dir, "webhooks.yaml"),
      CHARTER_TEST_WORKERS_SECRET: "workers-webhook-secret-0123456789",
    },
    keepStdout: true,
  });
  // Several connections: the primary spreads them over both workers.
  for (let i = 0; i < 6; i++)
    clients.push(
      createCharterClients({
        address: served.address,
        channelOptions: { "grpc.use_local_subchannel_pool": 1 },
      }),
    );
});
afterAll(async () => {
  for (const c of clients) c.close();
  served.signal("SIGTERM");
  await served.exited;
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("webhooks under --workers 2", () => {
  it("delivers every approval made through any worker once, from worker 1", async () => {
    const ids: string[] = [];
    for (const [i, c] of clients.entries()) {
      const { grantToken } = await c.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:workers",
        owner: "ana@example.com",
        purpose: "workers",
      });
      const { verdict } = await c.authority.authorize({
        grantToken,
        call: {
          callId: `c-${i}`,
          toolName: "charge_payment",
          argumentsJson: JSON.stringify({
            customer_id: "cus_ABC123",
            amount: 30 + i,
            currency: "EUR",
            description: "workers",
          }),
        },
      });
      expect(verdict?.decision).toBe(Decision.REQUIRE_APPROVAL);
      ids.push(verdict?.approvalId ?? "");
    }
    for (const id of ids) await receiver.waitFor((r) => r.body.includes(id), `created ${id}`);
    await new Promise((r) => setTimeout(r, 500));
    expect(ids.map((id) => receiver.received.filter((r) => r.body.includes(id)).length)).toEqual(
      ids.map(() => 1),
    );
    const starts = served
      .lines()
      .filter((l) => l["msg"] === "delivering approval events to webhooks");
    expect(starts.map((l) => l["worker"])).toEqual([1]);
    // The calls reached both workers.
    const workers = new Set(
      served
        .lines()
        .filter((l) => l["msg"] === "rpc")
        .map((l) => l["worker"]),
    );
    expect(workers.size).toBe(2);
  });

  it("resumes at once after a SIGKILL: the restarted server takes its own lease back", async () => {
    const dataDir = join(dir, "killed");
    const env = {
      CHARTER_WEBHOOKS: join(dir, "webhooks.yaml"),
      CHARTER_TEST_WORKERS_SECRET: "workers-webhook-secret-0123456789",
    };
    const first = await serveProcess({ dataDir, args: ["--workers", "1"], env });
    const c = createCharterClients({ address: first.address });
    receiver.respond = () => 503;
    const { grantToken } = await c.grants.issueGrant({
      profile: "owner-assistant",
      subject: "agent:killed",
      owner: "ana@example.com",
      purpose: "killed",
    });
    const { verdict } = await c.authority.authorize({
      grantToken,
      call: {
        callId: "c-killed",
        toolName: "charge_payment",
        argumentsJson: JSON.stringify({
          customer_id: "cus_ABC123",
          amount: 77,
          currency: "EUR",
          description: "killed",
        }),
      },
    });
    c.close();
    const id = verdict?.approvalId ?? "";
    await receiver.waitFor((r) => r.body.includes(id) && r.status === 503, "a failed attempt");
    await first.kill();
    receiver.respond = () => 204;
    const second = await serveProcess({ dataDir, args: ["--workers", "1"], env });
    try {
      // Well within the lease's 15 s: the lease was taken back, not waited out.
      await receiver.waitFor(
        (r) => r.body.includes(id) && r.status === 204,
        "after the restart",
        8000,
      );
    } finally {
      second.signal("SIGTERM");
      await second.exited;
    }
  });
});
