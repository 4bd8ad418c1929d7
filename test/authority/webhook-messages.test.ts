import { describe, expect, it } from "vitest";
import {
  SLACK_APPROVE_ACTION,
  SLACK_REJECT_ACTION,
  slackText,
  webhookJsonBody,
  webhookSlackBody,
} from "../../src/authority/index.js";
import type { ApprovalEvent } from "../../src/core/approval.js";

const EVENT: ApprovalEvent = {
  sequence: 42,
  kind: "created",
  at: 1_767_225_600,
  approval: {
    id: "apr_1",
    grantId: "grt_1",
    rootId: "grt_1",
    subject: "agent:<!here>",
    owner: "ana@example.com",
    actionId: "payment.charge",
    toolName: "charge_payment",
    requirement: "manager",
    requiredApprovals: 2,
    callDigest: "sha256:abc",
    summary: [
      {
        path: "/description",
        shown: "value",
        valueJson: JSON.stringify("<script>alert(1)</script> <!channel> & \u202Efdp.exe"),
        truncated: false,
      },
      { path: "/note", shown: "digest", digest: "sha256:def" },
      { path: "/authorization_code", shown: "hidden" },
    ],
    status: "pending",
    createdAt: 1_767_225_600,
    expiresAt: 1_767_225_900,
    approvedBy: ["manager:lea"],
  },
};

/** Every mrkdwn text of a Slack message: the top-level text and each block's. */
function slackTexts(body: string): string[] {
  const texts: string[] = [];
  const walk = (v: unknown, key?: string): void => {
    if (typeof v === "string" && key === "text") texts.push(v);
    else if (Array.isArray(v)) v.forEach((x) => walk(x));
    else if (v !== null && typeof v === "object")
      for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(JSON.parse(body));
  return texts;
}

describe("webhookSlackBody()", () => {
  it("escapes &, < and > in every text that came from the approval", () => {
    const texts = slackTexts(webhookSlackBody(EVENT, { linkBase: "https://inbox.example.com/" }));
    const all = texts.join("\n");
    expect(all).toContain("&lt;script&gt;");
    expect(all).toContain("&lt;!channel&gt;");
    expect(all).toContain("agent:&lt;!here&gt;");
    expect(all).toContain("&amp;");
    expect(all).not.toContain("<script>");
    expect(all).not.toContain("<!channel>");
    expect(all).not.toContain("<!here>");
    // The one link is Charter's own, to the inbox.
    expect(all.match(/</g) ?? []).toEqual(["<"]);
    expect(all).toContain("<https://inbox.example.com/approvals/apr_1|Open in the inbox>");
    // Bidi controls are shown as escapes, as the RPC shows them.
    expect(all).toContain("\\u{202E}fdp.exe");
    expect(all).toContain("1 of 2");
  });

  it("has a button to the inbox when a link base is set, and no link without one", () => {
    const withLink = JSON.parse(
      webhookSlackBody(EVENT, { linkBase: "https://inbox.example.com" }),
    ) as {
      blocks: { type: string; elements?: { url?: string }[] }[];
    };
    const actions = withLink.blocks.find((b) => b.type === "actions");
    expect(actions?.elements?.[0]?.url).toBe("https://inbox.example.com/approvals/apr_1");
    const without = webhookSlackBody(EVENT);
    expect(without).not.toContain("inbox.example.com");
    expect(JSON.parse(without)).toHaveProperty("text");
  });

  it("carries Approve and Reject buttons for the Slack actions endpoint, only on a pending approval", () => {
    type Message = {
      blocks: {
        type: string;
        elements?: { action_id?: string; value?: string; url?: string }[];
      }[];
    };
    const buttons = (body: string) =>
      (JSON.parse(body) as Message).blocks.find((b) => b.type === "actions")?.elements ?? [];
    const pending = buttons(webhookSlackBody(EVENT, { slackActions: true }));
    expect(pending.map((b) => [b.action_id, b.value])).toEqual([
      [SLACK_APPROVE_ACTION, "apr_1"],
      [SLACK_REJECT_ACTION, "apr_1"],
    ]);
    const decided = { ...EVENT, kind: "decided" as const };
    const approved = { ...decided, approval: { ...EVENT.approval, status: "approved" as const } };
    expect(buttons(webhookSlackBody(approved, { slackActions: true }))).toEqual([]);
    expect(buttons(webhookSlackBody(EVENT))).toEqual([]);
  });

  it("slackText() leaves no mrkdwn control character", () => {
    expect(slackText("a<b>&c <@U123> <!everyone>")).toBe(
      "a&lt;b&gt;&amp;c &lt;@U123&gt; &lt;!everyone&gt;",
    );
  });
});

describe("webhookJsonBody()", () => {
  it("names the event and holds the safe summary, with the inbox link", () => {
    const body = JSON.parse(webhookJsonBody(EVENT, "https://inbox.example.com")) as {
      type: string;
      timestamp: string;
      data: { sequence: number; approval: Record<string, unknown>; inboxUrl: string };
    };
    expect(body.type).toBe("approval.created");
    expect(body.timestamp).toBe("2026-01-01T00:00:00.000Z");
    expect(body.data.sequence).toBe(42);
    expect(body.data.inboxUrl).toBe("https://inbox.example.com/approvals/apr_1");
    expect(body.data.approval).toMatchObject({
      id: "apr_1",
      toolName: "charge_payment",
      requirement: "manager",
      status: "pending",
      approvals: 1,
      requiredApprovals: 2,
      expiresAt: 1_767_225_900,
      owner: "ana@example.com",
    });
    expect(body.data.approval["summary"]).toContainEqual({
      path: "/authorization_code",
      shown: "hidden",
    });
  });
});
