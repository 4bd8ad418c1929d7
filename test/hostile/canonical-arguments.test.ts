import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { argumentsDigest } from "../../src/core/digest.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { verifyReceipt, type Jwks } from "../../src/token/index.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// Findings of issue 10 about what is decided versus what is run, against the real server.
let charter: TestCharter;
beforeAll(async () => {
  charter = await startTestCharter();
});
afterAll(async () => {
  await charter.stop();
});

async function tokenFor(profile: string): Promise<string> {
  const issued = await charter.clients.grants.issueGrant({
    profile,
    subject: "agent:hostile",
    owner: "ana@example.com",
    purpose: "hostile input",
  });
  return issued.grantToken;
}

async function verdictOf(
  profile: string,
  call: { toolName?: string; actionId?: string; argumentsJson: string },
) {
  const { verdict } = await charter.clients.authority.authorize({
    grantToken: await tokenFor(profile),
    call: { callId: "c-1", ...call },
  });
  return verdict;
}

describe("canonical arguments over gRPC", () => {
  it("refuses duplicate keys under email-drafter: the bound `to` cannot be smuggled past the check", async () => {
    const argumentsJson =
      '{"to":"evil@attacker.com","to":"ana@example.com","subject":"s","body":"b"}';
    const verdict = await verdictOf("email-drafter", { toolName: "send_email", argumentsJson });
    expect(verdict).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "INVALID_ARGUMENTS" },
      receipt: "",
    });
    expect(verdict?.reason?.message).toMatch(/property name is repeated/);
    expect(verdict?.reason?.message).not.toMatch(/attacker/);
  });

  it("refuses duplicate keys nested in the refund arguments too", async () => {
    const argumentsJson =
      '{"order_id":"ord_A1B2C3","amount":40,"amount":9000,"currency":"EUR","reason":"damaged"}';
    expect(
      await verdictOf("owner-assistant", { toolName: "issue_refund", argumentsJson }),
    ).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "INVALID_ARGUMENTS" },
    });
  });

  it("decides on the bytes sent: a tool name with a leading U+FEFF is UNKNOWN_ACTION", async () => {
    const verdict = await verdictOf("owner-assistant", {
      toolName: "\ufeffweb_search",
      argumentsJson: '{"query":"x"}',
    });
    expect(verdict).toMatchObject({ decision: Decision.DENY, reason: { code: "UNKNOWN_ACTION" } });
    expect(verdict?.toolName).toBe("\ufeffweb_search");
  });

  it("refuses arguments starting with a BOM, a lone surrogate, or 1e400 with INVALID_ARGUMENTS, not INTERNAL", async () => {
    for (const [argumentsJson, message] of [
      ['\ufeff{"query":"x"}', /byte order mark/],
      ['{"query":"\\ud800"}', /lone surrogate/],
      ['{"query":"x","n":1e400}', /IEEE-754/],
    ] as const) {
      const verdict = await verdictOf("owner-assistant", { toolName: "web_search", argumentsJson });
      expect(verdict).toMatchObject({
        decision: Decision.DENY,
        reason: { code: "INVALID_ARGUMENTS" },
      });
      expect(verdict?.reason?.message).toMatch(message);
    }
    // The same number in an action without a tool: a deny, not INTERNAL.
    expect(
      await verdictOf("owner-assistant", { actionId: "audit.note", argumentsJson: '{"n":1e400}' }),
    ).toMatchObject({ reason: { code: "INVALID_ARGUMENTS" } });
  });

  it("refuses arguments nested 20,000 deep without stalling the server", async () => {
    const argumentsJson = `{"query":${"[".repeat(20_000)}${"]".repeat(20_000)}}`;
    const verdict = await verdictOf("owner-assistant", { toolName: "web_search", argumentsJson });
    expect(verdict).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "INVALID_ARGUMENTS" },
    });
    expect(verdict?.reason?.message).toMatch(/nests deeper than 32 levels/);
  });

  it("refuses arguments to an action without a tool (no schema would check them), and allows none", async () => {
    expect(
      await verdictOf("owner-assistant", {
        actionId: "audit.note",
        argumentsJson: '{"text":"anything"}',
      }),
    ).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "INVALID_ARGUMENTS" },
    });
    expect(
      await verdictOf("owner-assistant", { actionId: "audit.note", argumentsJson: "" }),
    ).toMatchObject({ decision: Decision.ALLOW });
  });

  it("binds the canonical arguments' digest in the receipt, so a tool service can check what it got", async () => {
    const argumentsJson = '{ "query" : "weather in Lisbon", "max_results": 5.0 }';
    const verdict = await verdictOf("owner-assistant", { toolName: "web_search", argumentsJson });
    expect(verdict?.decision).toBe(Decision.ALLOW);
    const jwks = JSON.parse((await charter.clients.keys.getJwks({})).jwksJson) as Jwks;
    const checked = await verifyReceipt(verdict?.receipt ?? "", jwks, {
      issuer: charter.config.issuer,
      audience: charter.config.audience,
      now: Math.floor(Date.now() / 1000),
    });
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    // The tool service re-canonicalizes what it received: key order and spacing do not matter, values do.
    expect(checked.receipt.argumentsDigest).toBe(
      argumentsDigest({ max_results: 5, query: "weather in Lisbon" }),
    );
    expect(checked.receipt.argumentsDigest).not.toBe(
      argumentsDigest({ max_results: 5, query: "weather in Porto" }),
    );
  });
});
