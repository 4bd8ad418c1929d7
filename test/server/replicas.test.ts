import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../src/app/context.js";
import { delegateGrant, revokeGrant } from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { verifyReceipt, type Jwks } from "../../src/token/index.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";
import { describePostgres, testSchema } from "../support/postgres.js";

// Two Charter servers on one PostgreSQL schema act as one authority for what exists today:
// grants, revocations, signing keys. Each has its own data dir and its own process state
// (verifier cache, key ring); only the database is shared.

/** The bound docs/operations.md promises for a revocation through one replica to reach every other. */
const REVOCATION_BOUND_MS = 1000;

describePostgres("two replicas on one PostgreSQL schema", () => {
  const schema = testSchema("replicas");
  let a: TestCharter;
  let b: TestCharter;

  beforeAll(async () => {
    await schema.create();
    // Started together, on an empty schema: both race to migrate it and to store the first key.
    [a, b] = await Promise.all([
      startTestCharter({ config: { database: schema.url } }),
      startTestCharter({ config: { database: schema.url } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await schema.drop();
  });

  const issue = (via: TestCharter, label: string) =>
    via.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: `agent:${label}`,
      owner: "ana@example.com",
      purpose: label,
    });
  const search = (grantToken: string, callId: string) => ({
    grantToken,
    call: { callId, toolName: "web_search", argumentsJson: '{"query":"charter"}' },
  });
  const verdictOf = async (via: TestCharter, token: string, callId: string) => {
    const { verdict } = await via.clients.authority.authorize(search(token, callId));
    return {
      decision: verdict?.decision,
      code: verdict?.reason?.code ?? "",
      receipt: verdict?.receipt ?? "",
    };
  };

  it("allow an approved call found by its content exactly once across both replicas", async () => {
    const { grantToken } = await issue(a, "approved-by-content");
    const call = {
      grantToken,
      call: {
        callId: "c-pay",
        toolName: "charge_payment",
        argumentsJson: JSON.stringify({
          customer_id: "cus_ABC123",
          amount: 12,
          currency: "EUR",
          description: "plan",
          authorization_code: "CODE-1",
        }),
      },
    };
    const held = (await a.clients.authority.authorize(call)).verdict;
    expect(held?.decision).toBe(Decision.REQUIRE_APPROVAL);
    await a.clients.approvals.decideApproval({
      approvalId: held?.approvalId ?? "",
      outcome: ApprovalOutcome.APPROVE,
      decidedBy: "ana@example.com",
      note: "",
    });
    // Retried without the approval id, ten times at once through both replicas.
    const verdicts = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? b : a).clients.authority.authorize(call)),
    );
    const decisions = verdicts.map((v) => v.verdict?.decision);
    expect(decisions.filter((d) => d === Decision.ALLOW)).toHaveLength(1);
  });

  it("sign with one key, having started together, and publish the same JWKS", async () => {
    expect(a.server.context.ring.signingKey().kid).toBe(b.server.context.ring.signingKey().kid);
    expect(await a.server.context.store.listKeys()).toHaveLength(1);
    expect((await a.clients.keys.getJwks({})).jwksJson).toBe(
      (await b.clients.keys.getJwks({})).jwksJson,
    );
  });

  it("authorize through B a grant issued through A, with a receipt that verifies against A's JWKS", async () => {
    const issued = await issue(a, "a-to-b");
    const verdict = await verdictOf(b, issued.grantToken, "c1");
    expect(verdict).toMatchObject({ decision: Decision.ALLOW, code: "" });
    const jwks = JSON.parse((await a.clients.keys.getJwks({})).jwksJson) as Jwks;
    const receipt = await verifyReceipt(verdict.receipt, jwks, {
      issuer: a.config.issuer,
      audience: a.config.audience,
      now: Math.floor(Date.now() / 1000),
    });
    expect(receipt).toMatchObject({ ok: true, receipt: { grantId: issued.grant?.id } });
    expect(
      await a.server.context.store.getDecision(receipt.ok ? receipt.receipt.decisionId : ""),
    ).toMatchObject({ decision: "allow" });
  });

  it.each([
    ["the grant itself", false],
    ["an ancestor of a delegated grant", true],
  ])(
    `honour through B, within ${REVOCATION_BOUND_MS} ms, a revocation of %s made through A`,
    async (_what, delegated) => {
      const root = await issue(a, delegated ? "revoke-parent" : "revoke-self");
      const token = delegated
        ? (
            await delegateGrant(a.server.context, {
              parentToken: root.grantToken,
              spec: { subject: "agent:child", allowed: ["web.search"] },
            })
          ).token
        : root.grantToken;
      // B has verified the token (its verifier cache holds it) and allowed it.
      expect(await verdictOf(b, token, "warm")).toMatchObject({ decision: Decision.ALLOW });

      await revokeGrant(a.server.context, { grantId: root.grant?.id ?? "", reason: "compromised" });
      const revokedAt = performance.now();
      let calls = 0;
      let verdict: Awaited<ReturnType<typeof verdictOf>>;
      do {
        calls++;
        verdict = await verdictOf(b, token, `after-${calls}`);
      } while (
        verdict.decision === Decision.ALLOW &&
        performance.now() - revokedAt < REVOCATION_BOUND_MS
      );
      const delayMs = performance.now() - revokedAt;

      expect(verdict).toMatchObject({ decision: Decision.DENY, code: "GRANT_REVOKED" });
      expect(delayMs).toBeLessThan(REVOCATION_BOUND_MS);
      // B asks the store on every call, so the very first call after the commit is already denied.
      expect(calls).toBe(1);
    },
  );
});

describePostgres("replicas starting together on an empty schema", () => {
  const schema = testSchema("keyrace");
  const contexts: AppContext[] = [];
  // Each replica has a data dir of its own, as replicas on separate machines do (each keeps its
  // own id file for the database), and none outlives the test.
  const dataDirs = Array.from({ length: 5 }, () => mkdtempSync(join(tmpdir(), "charter-keyrace-")));
  afterAll(async () => {
    for (const c of contexts.splice(0)) await c.close();
    await schema.drop();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it("agree on one signing key, and store only that one, even with clocks seconds apart", async () => {
    const config = {
      ...DEFAULTS,
      database: schema.url,
      catalog: `${FIXTURES}catalog.yaml`,
      policy: `${FIXTURES}policy.yaml`,
    };
    const base = Math.floor(Date.now() / 1000);
    contexts.push(
      ...(await Promise.all(
        dataDirs.map((dataDir, i) =>
          createAppContext({ ...config, dataDir }, { now: () => base + 5 - i }),
        ),
      )),
    );
    const kids = new Set(contexts.map((c) => c.ring.signingKey().kid));
    expect(kids.size).toBe(1);
    const stored = await contexts[0]?.store.listKeys();
    expect(stored?.map((k) => k.kid)).toEqual([...kids]);
  });

  it("agree on one store id: every replica's data dir names the database's, and each restarts", async () => {
    // Regression: each replica used to write its own new id (the last write won in the database),
    // so every other replica's data dir named an id the database no longer had, and its restart
    // was refused as "not the store this data dir was serving".
    const ids = dataDirs.map((dir) => readFileSync(join(dir, "charter.db.id"), "utf8").trim());
    expect(new Set(ids).size).toBe(1);
    for (const c of contexts.splice(0)) await c.close();
    const config = {
      ...DEFAULTS,
      database: schema.url,
      catalog: `${FIXTURES}catalog.yaml`,
      policy: `${FIXTURES}policy.yaml`,
    };
    for (const dataDir of dataDirs) contexts.push(await createAppContext({ ...config, dataDir }));
    expect(await contexts[0]?.store.readMeta("store_id")).toBe(ids[0]);
  });
});
