import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyAudit, verifyWebhook } from "../../src/authority/index.js";
import type { AuditEntry } from "../../src/authority/index.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { webhookKey } from "../../src/load/webhooks.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { memoryLog } from "../support/memory-log.js";
import { scrape } from "../support/metrics.js";
import {
  startWebhookReceiver,
  type Received,
  type WebhookReceiver,
} from "../support/webhook-receiver.js";

// Approval events to a real local HTTP receiver from a real Charter server: the json format
// signed, the slack format escaped, retries audited, the cursor kept across a restart.

const SECRET = "whsec_" + Buffer.from("webhook-test-secret-0123456789ab").toString("base64");
const SLACK_TOKEN = "T000SLACKPATHSECRET";
const AUTH_CODE = "AUTHCODE-do-not-send";
const OWNER = "ana@example.com";
const KEY = webhookKey(SECRET);

let dir: string;
let receiver: WebhookReceiver;
let charter: TestCharter;
const logs = memoryLog();

async function start(dataDir?: string): Promise<TestCharter> {
  return startTestCharter({
    ...(dataDir === undefined ? {} : { dataDir }),
    log: logs.log,
    config: {
      webhooks: join(dir, "webhooks.yaml"),
      webhookInboxUrl: "https://inbox.example.com/",
      metricsListen: "127.0.0.1:0",
      slackSigningSecret: "slack-signing-secret-for-the-buttons",
    },
  });
}

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "charter-webhooks-"));
  receiver = await startWebhookReceiver();
  process.env["CHARTER_TEST_WEBHOOK_SECRET"] = SECRET;
  process.env["CHARTER_TEST_SLACK_URL"] = `${receiver.url}/slack/${SLACK_TOKEN}`;
  writeFileSync(
    join(dir, "webhooks.yaml"),
    [
      "webhooks:",
      "  - name: ops",
      `    url: ${receiver.url}/ops`,
      "    format: json",
      "    secretEnv: CHARTER_TEST_WEBHOOK_SECRET",
      "  - name: chat",
      "    urlEnv: CHARTER_TEST_SLACK_URL",
      "    format: slack",
      "    events: [created]",
      // Nothing listens there: every attempt is refused at once.
      "  - name: stuck",
      `    url: http://127.0.0.1:${await closedPort()}/`,
      "    format: json",
      "    secretEnv: CHARTER_TEST_WEBHOOK_SECRET",
      "    events: [created]",
      "delivery: { timeoutMs: 2000, retryInitialMs: 50, retryMaxMs: 200, maxAttempts: 10, pollMs: 200 }",
    ].join("\n"),
  );
  charter = await start();
});

afterAll(async () => {
  await charter.stop();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
  delete process.env["CHARTER_TEST_WEBHOOK_SECRET"];
  delete process.env["CHARTER_TEST_SLACK_URL"];
});

async function hold(amount: number, description = "Monthly plan"): Promise<string> {
  const { grantToken } = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:worker-1",
    owner: OWNER,
    purpose: "webhooks",
  });
  const { verdict } = await charter.clients.authority.authorize({
    grantToken,
    call: {
      callId: `c-${amount}`,
      toolName: "charge_payment",
      argumentsJson: JSON.stringify({
        customer_id: "cus_ABC123",
        amount,
        currency: "EUR",
        description,
        authorization_code: AUTH_CODE,
      }),
    },
  });
  expect(verdict?.decision).toBe(Decision.REQUIRE_APPROVAL);
  return verdict?.approvalId ?? "";
}

interface JsonEvent {
  readonly type: string;
  readonly data: {
    readonly sequence: number;
    readonly approval: { readonly id: string; readonly status: string };
    readonly inboxUrl?: string;
  };
}
const parsed = (r: Received) => JSON.parse(r.body) as JsonEvent;
const ops = (type: string, approvalId: string) => (r: Received) =>
  r.path === "/ops" &&
  r.status === 204 &&
  parsed(r).type === type &&
  parsed(r).data.approval.id === approvalId;

/** The `webhook.delivery` records of an approval, once `until` holds of them. */
async function auditedUntil(
  approvalId: string,
  until: (records: AuditEntry[]) => boolean,
): Promise<AuditEntry[]> {
  for (let i = 0; ; i++) {
    const records = await deliveries(approvalId);
    if (until(records) || i === 200) return records;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function deliveries(approvalId: string): Promise<AuditEntry[]> {
  const rows = await charter.server.context.store.readAudit(0, 100_000);
  return rows
    .map((r) => JSON.parse(r.entry) as AuditEntry)
    .filter((e) => e.kind === "webhook.delivery" && e.approvalId === approvalId);
}

describe("webhooks on approval events", () => {
  it("sends `created` signed (Standard Webhooks), then `decided`, never an argument value", async () => {
    const id = await hold(11);
    const created = await receiver.waitFor(ops("approval.created", id), "created");
    const headers = {
      "webhook-id": String(created.headers["webhook-id"]),
      "webhook-timestamp": String(created.headers["webhook-timestamp"]),
      "webhook-signature": String(created.headers["webhook-signature"]),
    };
    expect(verifyWebhook(KEY, headers, created.body, Math.floor(Date.now() / 1000))).toBe(true);
    // Checked again as a receiver written from the Standard Webhooks text would, apart from Charter's code.
    const signed = `${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${created.body}`;
    const mac = createHmac("sha256", Buffer.from(SECRET.slice(6), "base64")).update(signed);
    expect(headers["webhook-signature"]).toBe(`v1,${mac.digest("base64")}`);
    expect(Math.abs(Number(headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(300);
    expect(headers["webhook-id"]).toBe(String(parsed(created).data.sequence));
    expect(parsed(created).data.inboxUrl).toBe(
      `https://inbox.example.com/approvals/${encodeURIComponent(id)}`,
    );
    await charter.clients.approvals.decideApproval({
      approvalId: id,
      outcome: ApprovalOutcome.APPROVE,
      decidedBy: OWNER,
      note: "",
    });
    const decided = await receiver.waitFor(ops("approval.decided", id), "decided");
    expect(parsed(decided).data.approval.status).toBe("approved");
    expect(Number(decided.headers["webhook-id"])).toBeGreaterThan(Number(headers["webhook-id"]));
    // The slack webhook wants `created` only.
    await receiver.waitFor((r) => r.path.startsWith("/slack/") && r.body.includes(id), "slack");
    expect(
      receiver.received.filter((r) => r.path.startsWith("/slack/") && r.body.includes(id)),
    ).toHaveLength(1);
    for (const r of receiver.received) expect(r.body).not.toContain(AUTH_CODE);
  });

  it("retries a failing receiver with back-off: delivered at the third attempt, each attempt audited and counted", async () => {
    let failures = 0;
    receiver.respond = (path) => (path === "/ops" && failures++ < 2 ? 500 : 204);
    const id = await hold(12);
    await receiver.waitFor(ops("approval.created", id), "created after two failures");
    receiver.respond = () => 204;
    const attempts = (
      await auditedUntil(id, (rs) =>
        rs.some((e) => e.webhook === "ops" && e.delivery === "delivered"),
      )
    ).filter((e) => e.webhook === "ops");
    expect(attempts.map((e) => [e.attempt, e.delivery, e.httpStatus])).toEqual([
      [1, "failed", 500],
      [2, "failed", 500],
      [3, "delivered", 204],
    ]);
    expect(new Set(attempts.map((e) => e.eventSequence)).size).toBe(1);
    const all = receiver.received.filter(
      (r) => r.path === "/ops" && r.body.includes(id) && parsed(r).type === "approval.created",
    );
    // The same event, the same webhook-id, each time.
    expect(new Set(all.map((r) => r.headers["webhook-id"])).size).toBe(1);
    const metrics = await scrape(charter.server.metricsAddress ?? "");
    expect(
      metrics.get('charter_webhook_deliveries_total{webhook="ops",outcome="failed"}'),
    ).toBeGreaterThanOrEqual(2);
    expect((await verifyAudit(charter.server.context)).ok).toBe(true);
  });

  it("abandons an event a webhook keeps failing after maxAttempts, holding back no other", async () => {
    const id = await hold(15);
    // The other webhooks got it while this one was still failing.
    await receiver.waitFor(ops("approval.created", id), "created");
    const stuck = (
      await auditedUntil(id, (rs) =>
        rs.some((e) => e.webhook === "stuck" && e.delivery === "abandoned"),
      )
    ).filter((e) => e.webhook === "stuck");
    expect(stuck.map((e) => e.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(stuck.at(-1)?.delivery).toBe("abandoned");
    expect(stuck.every((e) => e.detail === "ECONNREFUSED" && e.httpStatus === undefined)).toBe(
      true,
    );
  });

  it("shows Slack an approval's text as text: <script> and <!channel> escaped", async () => {
    const id = await hold(13, "<script>alert(1)</script> <!channel>");
    const slack = await receiver.waitFor(
      (r) => r.path.startsWith("/slack/") && r.body.includes(id),
      "slack created",
    );
    const message = JSON.parse(slack.body) as { text: string; blocks: unknown[] };
    expect(slack.body).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &lt;!channel&gt;");
    expect(slack.body).not.toContain("<script>");
    expect(slack.body).not.toContain("<!channel>");
    expect(message.text).toContain("charge_payment");
    // Slack actions are configured: the pending approval's message carries its buttons.
    expect(slack.body).toContain(`"action_id":"charter_approve"`);
    expect(slack.body).toContain(`"value":"${id}"`);
    expect(slack.headers["webhook-signature"]).toBeUndefined();
  });

  it("delivers an event that waited across a restart (the cursor is in the store)", async () => {
    receiver.respond = (path) => (path === "/ops" ? 503 : 204);
    const id = await hold(14);
    // At least one attempt failed before the stop: the event is not delivered yet.
    const failed = await auditedUntil(id, (rs) => rs.some((e) => e.webhook === "ops"));
    expect(failed.filter((e) => e.webhook === "ops").map((e) => e.delivery)).not.toContain(
      "delivered",
    );
    const before = receiver.received.length;
    const { dataDir } = charter;
    await charter.stop({ keepData: true });
    receiver.respond = () => 204;
    charter = await start(dataDir);
    await receiver.waitFor(ops("approval.created", id), "created after the restart");
    // Events delivered before the stop are not sent again: only this approval's reaches /ops.
    await new Promise((r) => setTimeout(r, 500));
    const after = receiver.received
      .slice(before)
      .filter((r) => r.path === "/ops" && r.status === 204);
    expect(after.map((r) => parsed(r).data.approval.id)).toEqual([id]);
  });

  it("never logs or audits a secret or a secret URL", async () => {
    const audit = (await charter.server.context.store.readAudit(0, 100_000))
      .map((r) => r.entry)
      .join("\n");
    expect(logs.text()).toContain("webhook ops");
    for (const secret of [
      SECRET,
      SECRET.slice(6),
      SLACK_TOKEN,
      receiver.url,
      "slack-signing-secret",
    ]) {
      expect(logs.text()).not.toContain(secret);
      expect(audit).not.toContain(secret);
    }
  });
});

describe("the inbox link of a webhook message", () => {
  it("is the inbox's own URL when webhookInboxUrl is unset and an inbox serves", async () => {
    const file = join(dir, "webhooks-inbox.yaml");
    writeFileSync(
      file,
      [
        "webhooks:",
        "  - name: linked",
        `    url: ${receiver.url}/linked`,
        "    format: json",
        "    secretEnv: CHARTER_TEST_WEBHOOK_SECRET",
        "    events: [created]",
        "delivery: { pollMs: 200 }",
      ].join("\n"),
    );
    const served = await startTestCharter({
      config: { webhooks: file, inboxListen: "127.0.0.1:0" },
    });
    try {
      const { grantToken } = await served.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:worker-1",
        owner: OWNER,
        purpose: "webhooks",
      });
      const { verdict } = await served.clients.authority.authorize({
        grantToken,
        call: {
          callId: "c-linked",
          toolName: "charge_payment",
          argumentsJson: JSON.stringify({
            customer_id: "cus_ABC123",
            amount: 77,
            currency: "EUR",
            description: "linked",
            authorization_code: AUTH_CODE,
          }),
        },
      });
      const id = verdict?.approvalId ?? "";
      const created = await receiver.waitFor(
        (r) => r.path === "/linked" && parsed(r).data.approval.id === id,
        "created with the inbox link",
      );
      expect(parsed(created).data.inboxUrl).toBe(
        `${served.server.inboxUrl ?? "?"}/approvals/${encodeURIComponent(id)}`,
      );
    } finally {
      await served.stop();
    }
  });
});
