import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { delegateGrant } from "../../src/authority/index.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { describePostgres, testSchema } from "../support/postgres.js";

// Budgets and approvals under concurrency over gRPC, through two servers on one store — one
// SQLite file (two connections, as two processes would be), or two replicas on one PostgreSQL
// schema: exactly the limit is allowed, never more; an approval created through one server is
// decided and used through the other; one approval allows exactly one call.
const dir = mkdtempSync(join(tmpdir(), "charter-concurrency-"));
const policy = join(dir, "policy.yaml");
writeFileSync(
  policy,
  `version: concurrency-1
sources:
  budget-50:
    allow: [web.search]
    limits: { maxCalls: 50 }
  parent-10:
    allow: [web.search, email.read]
    limits: { maxCalls: 10, maxDelegationDepth: 1 }
  per-action-3:
    allow: [web.search, email.read]
    limits: { maxCallsPerAction: 3 }
  approvals:
    approval: [payment.charge]
profiles:
  budget-50: { sources: [budget-50] }
  parent-10: { sources: [parent-10] }
  per-action-3: { sources: [per-action-3] }
  approvals: { sources: [approvals] }
`,
);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const search = (i: number) => ({
  callId: `c-${i}`,
  toolName: "web_search",
  argumentsJson: JSON.stringify({ query: `q${i}` }),
});
const issue = (charter: TestCharter, profile: string) =>
  charter.clients.grants.issueGrant({
    profile,
    subject: "agent:load",
    owner: "ana@example.com",
    purpose: "load",
  });
const decisions = (verdicts: { decision: Decision; reason?: { code: string } | undefined }[]) => ({
  allow: verdicts.filter((v) => v.decision === Decision.ALLOW).length,
  limit: verdicts.filter((v) => v.reason?.code === "LIMIT_EXCEEDED").length,
});

/** Two servers on one SQLite data dir. */
describe("on SQLite", () => {
  concurrencySuite("SQLite", async () => {
    const a = await startTestCharter({ config: { policy } });
    const b = await startTestCharter({ config: { policy }, dataDir: a.dataDir });
    const stop = async () => {
      await b.stop({ keepData: true });
      await a.stop();
    };
    return { a, b, stop };
  });
});

/** Two replicas on one PostgreSQL schema, each with a data dir of its own. */
describePostgres("on PostgreSQL", () => {
  const schema = testSchema("concurrency");
  beforeAll(() => schema.create());
  afterAll(() => schema.drop());
  concurrencySuite("PostgreSQL", async () => {
    const [a, b] = await Promise.all(
      [0, 1].map(() => startTestCharter({ config: { policy, database: schema.url } })),
    );
    if (!a || !b) throw new Error("two replicas expected");
    const stop = async () => {
      await Promise.all([a.stop(), b.stop()]);
    };
    return { a, b, stop };
  });
});

/** The same properties through servers `a` and `b` on one store. */
function concurrencySuite(
  label: string,
  start: () => Promise<{ a: TestCharter; b: TestCharter; stop: () => Promise<void> }>,
): void {
  let a: TestCharter;
  let b: TestCharter;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ a, b, stop } = await start());
  });
  afterAll(() => stop());

  describe(`budgets under concurrency (${label})`, () => {
    it("200 concurrent Authorize calls against maxCalls 50 allow exactly 50", async () => {
      const { grantToken } = await issue(a, "budget-50");
      const verdicts = await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          const server = i % 2 === 0 ? a : b;
          const { verdict } = await server.clients.authority.authorize({
            grantToken,
            call: search(i),
          });
          if (!verdict) throw new Error("no verdict");
          return verdict;
        }),
      );
      expect(decisions(verdicts)).toEqual({ allow: 50, limit: 150 });
      expect(
        verdicts.filter((v) => v.decision === Decision.ALLOW).every((v) => v.receipt !== ""),
      ).toBe(true);
      expect(
        verdicts.filter((v) => v.decision === Decision.DENY).every((v) => v.receipt === ""),
      ).toBe(true);
    });

    it("a parent with maxCalls 10 and two children calling concurrently allow exactly 10 in total", async () => {
      const parent = await issue(a, "parent-10");
      const children = await Promise.all(
        ["child-1", "child-2"].map((subject) =>
          delegateGrant(a.server.context, {
            parentToken: parent.grantToken,
            spec: { subject, allowed: ["web.search"] },
          }),
        ),
      );
      const verdicts = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const child = children[i % 2];
          const server = i % 4 < 2 ? a : b;
          const { verdict } = await server.clients.authority.authorize({
            grantToken: child?.token ?? "",
            call: search(i),
          });
          if (!verdict) throw new Error("no verdict");
          return verdict;
        }),
      );
      expect(decisions(verdicts)).toEqual({ allow: 10, limit: 30 });
      expect(await a.server.context.store.getBudgetUsage(parent.grant?.id ?? "")).toMatchObject({
        calls: 10,
      });
    });

    it("BatchAuthorize consumes in call order", async () => {
      const { grantToken } = await issue(a, "per-action-3");
      const items = [0, 1, 2, 3, 4].map((i) => ({ call: search(i) }));
      items.splice(2, 0, {
        call: {
          callId: "read",
          toolName: "read_email",
          argumentsJson: JSON.stringify({ message_id: "msg_12345678" }),
        },
      });
      const { verdicts } = await a.clients.authority.batchAuthorize({ grantToken, items });
      expect(
        verdicts.map((v) => [v.callId, v.decision === Decision.ALLOW ? "allow" : v.reason?.code]),
      ).toEqual([
        ["c-0", "allow"],
        ["c-1", "allow"],
        ["read", "allow"],
        ["c-2", "allow"],
        ["c-3", "LIMIT_EXCEEDED"],
        ["c-4", "LIMIT_EXCEEDED"],
      ]);
    });
  });

  describe(`one approval used at once (${label})`, () => {
    const charge = JSON.stringify({
      customer_id: "cus_ABC123",
      amount: 10,
      currency: "EUR",
      description: "x",
    });

    it("two concurrent Authorize calls with one approval id, through two servers on one data dir: exactly one allow", async () => {
      for (let round = 0; round < 5; round++) {
        const { grantToken } = await issue(a, "approvals");
        const call = { callId: `pay-${round}`, toolName: "charge_payment", argumentsJson: charge };
        const held = (await a.clients.authority.authorize({ grantToken, call })).verdict;
        expect(held?.decision).toBe(Decision.REQUIRE_APPROVAL);
        // Created through one server, decided through the other.
        await b.clients.approvals.decideApproval({
          approvalId: held?.approvalId ?? "",
          outcome: ApprovalOutcome.APPROVE,
          decidedBy: "ana@example.com",
          note: "",
        });
        const both = await Promise.all(
          [a, b, a, b].map((s) =>
            s.clients.authority.authorize({ grantToken, call, approvalId: held?.approvalId ?? "" }),
          ),
        );
        const verdicts = both.map((r) => r.verdict);
        expect(verdicts.filter((v) => v?.decision === Decision.ALLOW)).toHaveLength(1);
        expect(verdicts.filter((v) => v?.reason?.code === "APPROVAL_CONSUMED")).toHaveLength(3);
      }
    });

    it("many concurrent require_approval calls for one call create one approval", async () => {
      const { grantToken } = await issue(a, "approvals");
      const call = { callId: "pay-x", toolName: "charge_payment", argumentsJson: charge };
      const held = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? a : b).clients.authority.authorize({ grantToken, call }),
        ),
      );
      expect(new Set(held.map((h) => h.verdict?.approvalId)).size).toBe(1);
    });
  });
}
