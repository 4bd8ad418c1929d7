import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SLACK_APPROVE_ACTION } from "../../src/authority/index.js";
import { ApprovalStatus, Decision } from "../../src/gen/charter/v1/common_pb.js";
import type { TestCharter } from "../support/charter-server.js";
import { inboxUrl, pendingRefund, startInboxCharter } from "./inbox-fixture.js";

// Slack's approve clicks over the inbox's HTTP port (`POST /slack/actions`), against a real
// Charter: a signed click of a mapped manager counts; a forged one decides nothing; then the
// agent's retry, without the approval id, is allowed once.
const SECRET = "slack-signing-secret-for-tests";
let charter: TestCharter;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "charter-inbox-slack-"));
  const approvers = join(dir, "approvers.yaml");
  writeFileSync(
    approvers,
    "approvers:\n  mgr1@example.com: { roles: [manager], slack: U0MGR1 }\n  mgr2@example.com: { roles: [manager], slack: U0MGR2 }\n",
  );
  charter = await startInboxCharter({ config: { approvers, slackSigningSecret: SECRET } });
});
afterAll(async () => {
  await charter.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Posts a click as Slack does: form-encoded `payload`, signed with `secret` now. */
async function click(approvalId: string, user: string, secret = SECRET) {
  const payload = {
    type: "block_actions",
    user: { id: user },
    team: { id: "T0ACME" },
    actions: [{ action_id: SLACK_APPROVE_ACTION, value: approvalId }],
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const ts = String(Math.floor(Date.now() / 1000));
  const mac = createHmac("sha256", secret).update(`v0:${ts}:${body}`).digest("hex");
  return fetch(`${inboxUrl(charter)}/slack/actions`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": ts,
      "x-slack-signature": `v0=${mac}`,
    },
    body,
  });
}

describe("POST /slack/actions", () => {
  it("two mapped managers approve by Slack; a forged click decides nothing; the retry runs once", async () => {
    const { id, token, args } = await pendingRefund(charter);
    const forged = await click(id, "U0MGR1", "not-the-secret");
    expect(forged.status).toBe(401);
    expect((await click(id, "U0MGR1")).status).toBe(200);
    const second = await click(id, "U0MGR2");
    expect(((await second.json()) as { text: string }).text).toContain("approved (2 of 2)");
    const { approval } = await charter.clients.approvals.getApproval({ approvalId: id });
    expect(approval?.status).toBe(ApprovalStatus.APPROVED);
    expect(approval?.approvedBy).toEqual(["mgr1@example.com", "mgr2@example.com"]);
    const retry = async () =>
      (
        await charter.clients.authority.authorize({
          grantToken: token,
          call: { callId: "refund-2", toolName: "issue_refund", argumentsJson: args },
        })
      ).verdict?.decision;
    expect(await retry()).toBe(Decision.ALLOW);
    expect(await retry()).toBe(Decision.REQUIRE_APPROVAL);
  });

  it("answers only POST, and only form bodies", async () => {
    expect((await fetch(`${inboxUrl(charter)}/slack/actions`)).status).toBe(405);
    const json = await fetch(`${inboxUrl(charter)}/slack/actions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(json.status).toBe(415);
  });
});
