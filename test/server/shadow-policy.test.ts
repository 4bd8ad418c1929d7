import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAuditRecords, verifyAudit } from "../../src/authority/index.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";
import { scrape } from "../support/metrics.js";

// Shadow policies on a real server (port 0, the generated client, a real SQLite file): a
// candidate that denies web_search records a flip for each web_search allowed, in the decision's
// record and audit record and the metric, while every caller gets the live verdict.

const FLIPS = 'charter_shadow_flips_total{from="allow",to="deny"}';
const LIVE = readFileSync(join(FIXTURES, "policy.yaml"), "utf8");

/** The demo policy under another version, with `web.search` denied by the global guardrails. */
function denyingWebSearch(version: string): string {
  const text = LIVE.replace(
    "deny: [shell.exec, files.delete]",
    "deny: [shell.exec, files.delete, web.search]",
  ).replace('version: "demo-policy-1"', `version: "${version}"`);
  expect(text).not.toBe(LIVE);
  return text;
}

const search = (callId: string) => ({
  callId,
  toolName: "web_search",
  argumentsJson: '{"query":"charter"}',
});
const readEmail = (callId: string) => ({
  callId,
  toolName: "read_email",
  argumentsJson: '{"message_id":"msg_7f3a9c21"}',
});

async function issue(charter: TestCharter): Promise<string> {
  const { grantToken } = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:shadow",
    owner: "ana@example.com",
    purpose: "shadow policy",
  });
  return grantToken;
}

async function auditEntryOf(charter: TestCharter, decisionId: string) {
  for await (const record of readAuditRecords(charter.server.context))
    if (record.entry.kind === "decision" && record.entry.decisionId === decisionId)
      return record.entry;
  return expect.unreachable(`no audit record of ${decisionId}`);
}

describe("a server with a shadow policy", () => {
  let dir: string;
  let shadowPolicy: string;
  let charter: TestCharter;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "charter-shadow-"));
    shadowPolicy = join(dir, "candidate.yaml");
    writeFileSync(shadowPolicy, denyingWebSearch("candidate-1"));
    charter = await startTestCharter({ config: { shadowPolicy, metricsListen: "127.0.0.1:0" } });
  });
  afterAll(async () => {
    await charter.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("records allow → deny for each web_search allowed, while callers get the live verdict", async () => {
    const metrics = charter.server.metricsAddress ?? "";
    const before = (await scrape(metrics)).get(FLIPS) ?? 0;
    const grantToken = await issue(charter);
    const ids: string[] = [];
    for (const callId of ["s1", "s2", "s3"]) {
      const { verdict } = await charter.clients.authority.authorize({
        grantToken,
        call: search(callId),
      });
      expect(verdict?.decision).toBe(Decision.ALLOW);
      expect(verdict?.receipt).not.toBe("");
      ids.push(verdict?.decisionId ?? "");
    }
    const { verdicts } = await charter.clients.authority.batchAuthorize({
      grantToken,
      items: [{ call: search("s4") }, { call: readEmail("r1") }],
    });
    expect(verdicts.map((v) => v.decision)).toEqual([Decision.ALLOW, Decision.ALLOW]);
    ids.push(verdicts[0]?.decisionId ?? "");
    const { store } = charter.server.context;
    for (const id of ids) {
      expect(await store.getDecision(id)).toMatchObject({
        decision: "allow",
        policyVersion: "demo-policy-1",
        shadowPolicyVersion: "candidate-1",
        shadowFlip: { to: "deny", reasonCode: "EXPLICIT_DENY" },
      });
      expect(await auditEntryOf(charter, id)).toMatchObject({
        decision: "allow",
        policyVersion: "demo-policy-1",
        shadowPolicyVersion: "candidate-1",
        shadowFlip: { to: "deny", reasonCode: "EXPLICIT_DENY" },
      });
    }
    const scraped = await scrape(metrics);
    expect((scraped.get(FLIPS) ?? 0) - before).toBe(4);
    // The grant recomposed under the candidate is cached once, and the metrics say so.
    expect(scraped.get('charter_cache_entries{cache="shadow"}')).toBeGreaterThanOrEqual(1);
    // The candidate agrees on read_email: no flip, but the shadow's version is recorded.
    const agreed = verdicts[1]?.decisionId ?? "";
    const record = await store.getDecision(agreed);
    expect(record).toMatchObject({ decision: "allow", shadowPolicyVersion: "candidate-1" });
    expect(record).not.toHaveProperty("shadowFlip");
    const entry = await auditEntryOf(charter, agreed);
    expect(entry.shadowPolicyVersion).toBe("candidate-1");
    expect(entry).not.toHaveProperty("shadowFlip");
    expect(await verifyAudit(charter.server.context)).toMatchObject({ ok: true });
  });

  it("records no flip for a call both policies deny, and keeps the pair when a reload brings a shadow policy that does not load", async () => {
    const grantToken = await issue(charter);
    const shell = await charter.clients.authority.authorize({
      grantToken,
      call: { callId: "x1", toolName: "run_shell", argumentsJson: '{"command":"ls"}' },
    });
    expect(shell.verdict?.reason?.code).toBe("EXPLICIT_DENY");
    const denied = await charter.server.context.store.getDecision(shell.verdict?.decisionId ?? "");
    expect(denied).toMatchObject({ decision: "deny", shadowPolicyVersion: "candidate-1" });
    expect(denied).not.toHaveProperty("shadowFlip");

    writeFileSync(shadowPolicy, "version: candidate-2\nsources: { nope: { allow: [no.such] } }\n");
    await expect(charter.server.reload()).rejects.toThrow(/candidate\.yaml/);
    const again = await charter.clients.authority.authorize({ grantToken, call: search("s9") });
    expect(again.verdict?.decision).toBe(Decision.ALLOW);
    expect(
      await charter.server.context.store.getDecision(again.verdict?.decisionId ?? ""),
    ).toMatchObject({ shadowPolicyVersion: "candidate-1", shadowFlip: { to: "deny" } });

    // A candidate equal to the live policy (another version): no flip any more, after a reload.
    writeFileSync(shadowPolicy, LIVE.replace('version: "demo-policy-1"', 'version: "candidate-3"'));
    await charter.server.reload();
    const equal = await charter.clients.authority.authorize({ grantToken, call: search("s10") });
    expect(equal.verdict?.decision).toBe(Decision.ALLOW);
    const record = await charter.server.context.store.getDecision(equal.verdict?.decisionId ?? "");
    expect(record).toMatchObject({ shadowPolicyVersion: "candidate-3" });
    expect(record).not.toHaveProperty("shadowFlip");
  });
});

describe("shadowPolicy", () => {
  it("refuses start-up when the shadow policy does not load, naming its file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "charter-shadow-bad-"));
    try {
      const shadowPolicy = join(dir, "broken.yaml");
      writeFileSync(shadowPolicy, "version: broken\nsources: { nope: { allow: [no.such] } }\n");
      await expect(startTestCharter({ config: { shadowPolicy } })).rejects.toThrow(/broken\.yaml/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("changes nothing in the records when not configured", async () => {
    const charter = await startTestCharter();
    try {
      const grantToken = await issue(charter);
      const { verdict } = await charter.clients.authority.authorize({
        grantToken,
        call: search("plain"),
      });
      expect(verdict?.decision).toBe(Decision.ALLOW);
      const id = verdict?.decisionId ?? "";
      const record = await charter.server.context.store.getDecision(id);
      expect(Object.keys(record ?? {}).filter((k) => k.startsWith("shadow"))).toEqual([]);
      const entry = await auditEntryOf(charter, id);
      expect(Object.keys(entry).filter((k) => k.startsWith("shadow"))).toEqual([]);
    } finally {
      await charter.stop();
    }
  });

  it("recomposes the grant from the request it was issued for: an action asked for that only the candidate allows flips deny → allow", async () => {
    const dir = mkdtempSync(join(tmpdir(), "charter-shadow-origin-"));
    const from = "      - web.fetch\n";
    expect(LIVE).toContain(from);
    const shadowPolicy = join(dir, "candidate.yaml");
    writeFileSync(
      shadowPolicy,
      LIVE.replace(from, `${from}      - shell.exec\n`)
        .replace("deny: [shell.exec, files.delete]", "deny: [files.delete]")
        .replace('version: "demo-policy-1"', 'version: "candidate-shell"'),
    );
    const charter = await startTestCharter({ config: { shadowPolicy } });
    try {
      // Asked for two actions; the live policy grants web.search and denies shell.exec.
      const { grantToken, grant } = await charter.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:shadow",
        owner: "ana@example.com",
        purpose: "shadow policy",
        requestedActions: ["web.search", "shell.exec"],
      });
      expect(grant?.allowed).toEqual(["web.search"]);
      const { verdict } = await charter.clients.authority.authorize({
        grantToken,
        call: { callId: "shell", toolName: "run_shell", argumentsJson: '{"command":"ls"}' },
      });
      expect(verdict?.decision, JSON.stringify(verdict?.reason)).toBe(Decision.DENY);
      const record = await charter.server.context.store.getDecision(verdict?.decisionId ?? "");
      expect(record?.shadowFlip).toMatchObject({ to: "allow" });
    } finally {
      await charter.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
