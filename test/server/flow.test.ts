import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Decision, Dialect, GrantMode } from "../../src/gen/charter/v1/common_pb.js";
import { verifyReceipt, type Jwks } from "../../src/token/index.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

let charter: TestCharter;
beforeAll(async () => {
  charter = await startTestCharter();
});
afterAll(async () => {
  await charter.stop();
});

async function issue(profile: string, extra: Record<string, unknown> = {}) {
  return charter.clients.grants.issueGrant({
    profile,
    subject: "agent:worker-1",
    owner: "ana@example.com",
    purpose: "integration test",
    ...extra,
  });
}

const refund = (amount: number) =>
  JSON.stringify({ order_id: "ord_A1B2C3", amount, currency: "EUR", reason: "damaged" });

describe("issue -> catalog -> authorize over gRPC", () => {
  it("issues a grant whose token fetches the catalog of exactly the granted tools", async () => {
    const issued = await issue("receptionist");
    expect(issued.grantToken.split(".")).toHaveLength(3);
    expect(issued.grant?.profile).toBe("receptionist");
    const { view, renderedToolsJson } = await charter.clients.catalog.getCatalog({
      grantToken: issued.grantToken,
      dialect: Dialect.OPENAI_CHAT,
    });
    const names = view?.tools.map((t) => t.name) ?? [];
    expect(names.sort()).toEqual(
      [
        "check_availability",
        "create_calendar_event",
        "lookup_contact",
        "message_owner",
        "reply_in_chat",
      ].sort(),
    );
    const rendered = JSON.parse(renderedToolsJson) as {
      type: string;
      function: { name: string };
    }[];
    expect(rendered.map((t) => t.function.name).sort()).toEqual([...names].sort());
    expect(renderedToolsJson).not.toContain("issue_refund");
    expect(renderedToolsJson).not.toContain("run_shell");
  });

  it("allows a granted call and signs a receipt that verifies offline against the JWKS", async () => {
    const { grantToken, grant } = await issue("owner-assistant");
    const { verdict } = await charter.clients.authority.authorize({
      grantToken,
      call: { callId: "call-1", toolName: "issue_refund", argumentsJson: refund(40) },
    });
    expect(verdict).toMatchObject({
      decision: Decision.ALLOW,
      actionId: "refund.issue",
      toolName: "issue_refund",
      resource: "order/ord_A1B2C3",
      callId: "call-1",
    });
    expect(verdict?.decisionId).toMatch(/^dec_/);
    const jwks = JSON.parse((await charter.clients.keys.getJwks({})).jwksJson) as Jwks;
    const receipt = await verifyReceipt(verdict?.receipt ?? "", jwks, {
      issuer: charter.config.issuer,
      audience: charter.config.audience,
      now: Math.floor(Date.now() / 1000),
    });
    expect(receipt).toMatchObject({ ok: true });
    if (receipt.ok) {
      expect(receipt.receipt).toMatchObject({
        grantId: grant?.id,
        actionId: "refund.issue",
        callId: "call-1",
        argsDigest: verdict?.callDigest,
      });
    }
  });

  it("denies a forbidden tool with a reason the model can act on, and no receipt", async () => {
    const { grantToken } = await issue("owner-assistant");
    const { verdict } = await charter.clients.authority.authorize({
      grantToken,
      call: {
        callId: "call-2",
        toolName: "run_shell",
        argumentsJson: JSON.stringify({ command: "rm -rf /" }),
      },
    });
    expect(verdict).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "EXPLICIT_DENY" },
      receipt: "",
    });
    expect(verdict?.reason?.message).toMatch(/forbidden/);
  });

  it("holds a refund above the threshold for a manager's approval", async () => {
    const { grantToken } = await issue("owner-assistant");
    const { verdict } = await charter.clients.authority.authorize({
      grantToken,
      call: { callId: "call-3", toolName: "issue_refund", argumentsJson: refund(250) },
    });
    expect(verdict).toMatchObject({
      decision: Decision.REQUIRE_APPROVAL,
      requirement: "manager",
      receipt: "",
    });
    expect(verdict?.callDigest).toMatch(/^[0-9a-f]{64}$/);
  });

  it("suppresses the effect of an allowed call under a shadow grant", async () => {
    const { grantToken, grant } = await issue("owner-assistant-dryrun");
    expect(grant?.mode).toBe(GrantMode.SHADOW);
    const { verdict } = await charter.clients.authority.authorize({
      grantToken,
      call: { callId: "call-4", toolName: "issue_refund", argumentsJson: refund(40) },
    });
    expect(verdict).toMatchObject({
      decision: Decision.EFFECT_SUPPRESSED,
      reason: { code: "SHADOW_MODE" },
      receipt: "",
    });
  });

  it("answers INVALID_ARGUMENTS for arguments that are not JSON, without echoing them", async () => {
    const { grantToken } = await issue("owner-assistant");
    const { verdict } = await charter.clients.authority.authorize({
      grantToken,
      call: {
        callId: "call-5",
        toolName: "issue_refund",
        argumentsJson: "{amount: sk-live-SECRET",
      },
    });
    expect(verdict).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "INVALID_ARGUMENTS" },
    });
    expect(JSON.stringify(verdict?.reason)).not.toContain("SECRET");
  });

  it("records the grant so GetGrant returns it", async () => {
    const { grant } = await issue("email-drafter", {
      requestedActions: ["email.read", "email.draft"],
    });
    const got = await charter.clients.grants.getGrant({ grantId: grant?.id ?? "" });
    expect(got.revoked).toBe(false);
    expect(got.grant?.allowed).toEqual(["email.draft", "email.read"]);
  });
});

describe("BatchAuthorize", () => {
  it("answers one verdict per call, in request order", async () => {
    const { grantToken } = await issue("owner-assistant");
    const pattern = [
      { toolName: "issue_refund", argumentsJson: refund(40), expected: Decision.ALLOW },
      { toolName: "run_shell", argumentsJson: '{"command":"ls"}', expected: Decision.DENY },
      { toolName: "issue_refund", argumentsJson: refund(250), expected: Decision.REQUIRE_APPROVAL },
      { toolName: "no_such_tool", argumentsJson: "{}", expected: Decision.DENY },
    ];
    const items = Array.from({ length: 100 }, (_, i) => {
      const p = pattern[i % pattern.length] as (typeof pattern)[number];
      return { call: { callId: `c${i}`, toolName: p.toolName, argumentsJson: p.argumentsJson } };
    });
    const { verdicts } = await charter.clients.authority.batchAuthorize({ grantToken, items });
    expect(verdicts.map((v) => v.callId)).toEqual(items.map((i) => i.call.callId));
    expect(verdicts.map((v) => v.decision)).toEqual(
      items.map((_, i) => (pattern[i % pattern.length] as (typeof pattern)[number]).expected),
    );
    expect(verdicts[3]?.reason?.code).toBe("UNKNOWN_ACTION");
  });

  it("refuses a batch larger than the configured maximum", async () => {
    const { grantToken } = await issue("owner-assistant");
    const items = Array.from({ length: charter.config.maxBatch + 1 }, (_, i) => ({
      call: { callId: `c${i}`, toolName: "web_search", argumentsJson: "{}" },
    }));
    await expect(
      charter.clients.authority.batchAuthorize({ grantToken, items }),
    ).rejects.toMatchObject({
      code: 8, // RESOURCE_EXHAUSTED: counted on the raw bytes, before the batch is decoded
      details: `items: at most ${charter.config.maxBatch} entries (maxBatch)`,
    });
  });
});
