import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../src/app/context.js";
import {
  answerSlackAction,
  authorize,
  getApproval,
  issueGrant,
  SLACK_APPROVE_ACTION,
  SLACK_REJECT_ACTION,
  type SlackRequest,
} from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import { FIXTURES } from "../support/charter-server.js";

// Issue 25: Slack interactive actions are accepted only with a valid Slack signature within
// 5 minutes, from a Slack user the approver directory maps to an approver principal; the answer
// then goes through decideApproval as that principal. On a real store, with the demo pair.
const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const NOW = 1_800_000_000;
let dataDir: string;
let app: AppContext;
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "charter-slack-"));
  const approvers = join(dataDir, "approvers.yaml");
  writeFileSync(
    approvers,
    [
      "approvers:",
      "  mgr1@example.com: { roles: [manager], slack: U0MGR1 }",
      "  mgr2@example.com: { roles: [manager], slack: U0MGR2 }",
      "",
    ].join("\n"),
  );
  app = await createAppContext(
    {
      ...DEFAULTS,
      dataDir,
      catalog: join(FIXTURES, "catalog.yaml"),
      policy: join(FIXTURES, "policy.yaml"),
      approvers,
    },
    { now: () => NOW },
  );
});
afterEach(async () => {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A refund of 250 held for the demo's two managers. */
async function heldRefund(): Promise<string> {
  const { token } = await issueGrant(app, {
    profile: "owner-assistant",
    subject: "agent:a",
    owner: "ana@example.com",
    purpose: "slack",
    requestedActions: [],
  });
  const argumentsJson = JSON.stringify({
    order_id: "ord_A1B2C3",
    amount: 250,
    currency: "EUR",
    reason: "damaged",
  });
  const { verdict } = await authorize(app, {
    grantToken: token,
    call: { callId: "c", toolName: "issue_refund", actionId: "", argumentsJson },
  });
  expect(verdict.requirement).toBe("manager");
  return verdict.approvalId ?? "";
}

/** A click as Slack sends it, signed with `secret` at `ts`. */
function click(
  approvalId: string,
  options: { user?: string; action?: string; ts?: number; secret?: string; team?: string } = {},
): SlackRequest {
  const payload = {
    type: "block_actions",
    user: { id: options.user ?? "U0MGR1" },
    team: { id: options.team ?? "T0ACME" },
    actions: [{ action_id: options.action ?? SLACK_APPROVE_ACTION, value: approvalId }],
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const ts = String(options.ts ?? NOW);
  const mac = createHmac("sha256", options.secret ?? SECRET)
    .update(`v0:${ts}:${body}`)
    .digest("hex");
  return { timestamp: ts, signature: `v0=${mac}`, body };
}

const answer = (req: SlackRequest, teamId?: string) =>
  answerSlackAction(app, { signingSecret: SECRET, ...(teamId ? { teamId } : {}) }, req);

const approvedBy = async (id: string) => (await getApproval(app, id)).approvedBy;

describe("Slack approve and reject clicks", () => {
  it("two mapped managers approve a 2-of-2 requirement", async () => {
    const id = await heldRefund();
    const first = await answer(click(id, { user: "U0MGR1" }));
    expect(first.status).toBe(200);
    expect(first.body.text).toContain("1 of 2");
    const second = await answer(click(id, { user: "U0MGR2" }));
    expect(second.body.text).toContain("approved (2 of 2)");
    expect(await approvedBy(id)).toEqual(["mgr1@example.com", "mgr2@example.com"]);
  });

  it("refuses a forged signature, a stale or future timestamp, and no secret; nothing decided", async () => {
    const id = await heldRefund();
    const forged = await answer(click(id, { secret: "not-the-secret" }));
    expect(forged.status).toBe(401);
    expect(forged.body.text).toContain("does not verify");
    expect((await answer(click(id, { ts: NOW - 301 }))).status).toBe(401);
    expect((await answer(click(id, { ts: NOW + 301 }))).status).toBe(401);
    const tampered = click(id);
    expect(
      (await answer({ ...tampered, body: tampered.body.replace("U0MGR1", "U0MGR2") })).status,
    ).toBe(401);
    expect(
      (await answerSlackAction(app, { signingSecret: "" }, click(id, { secret: "" }))).status,
    ).toBe(401);
    expect(await approvedBy(id)).toEqual([]);
  });

  it("a Slack user the directory does not map decides nothing", async () => {
    const id = await heldRefund();
    const r = await answer(click(id, { user: "U0ANYONE" }));
    expect(r.body.text).toContain("not an approver");
    expect(await approvedBy(id)).toEqual([]);
  });

  it("a click from another workspace is refused when the team is pinned", async () => {
    const id = await heldRefund();
    expect((await answer(click(id, { team: "T0EVIL" }), "T0ACME")).status).toBe(403);
    expect((await answer(click(id, { team: "T0ACME" }), "T0ACME")).status).toBe(200);
    expect(await approvedBy(id)).toEqual(["mgr1@example.com"]);
  });

  it("a reject rejects; the same manager answering twice is told so", async () => {
    const id = await heldRefund();
    await answer(click(id));
    const twice = await answer(click(id));
    expect(twice.body.text).toContain("Not recorded");
    const rejected = await answer(click(id, { user: "U0MGR2", action: SLACK_REJECT_ACTION }));
    expect(rejected.body.text).toContain("rejected");
    expect((await getApproval(app, id)).status).toBe("rejected");
  });

  it("refuses a payload that is not a Charter button", async () => {
    const id = await heldRefund();
    expect((await answer(click(id, { action: "something_else" }))).status).toBe(400);
    expect((await answer(click("apr_'; drop table"))).status).toBe(400);
  });
});
