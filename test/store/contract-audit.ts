import { beforeEach, describe, expect, it } from "vitest";
import { auditLinkProblem, GENESIS_HASH } from "../../src/core/audit-chain.js";
import type { AuditEntry, Store } from "../../src/store/port.js";
import { expectStoreError } from "./contract-assert.js";
import { ISSUED_AT, makeApproval, makeDecision, makeGrant } from "./fixtures.js";

/** The audit chain: one record per decision and per grant and approval event, hash-chained, in one order; checkpoints. */
export function describeAuditContract(current: () => Store): void {
  describe("audit log", () => {
    let store: Store;
    beforeEach(() => {
      store = current();
    });

    async function entries(): Promise<AuditEntry[]> {
      return (await store.readAudit(0, 10_000)).map((r) => JSON.parse(r.entry) as AuditEntry);
    }

    it("writes the caller into grant and decision records, and appends records of events without rows", async () => {
      const root = makeGrant("g-root");
      await store.putGrant(root, "orchestrator-1");
      await store.commitDecision(makeDecision("dec_c", { caller: "gateway-1" }));
      await store.revokeGrant("g-root", "done", ISSUED_AT + 12, "orchestrator-1");
      expect(
        await store.appendAudit({
          at: ISSUED_AT + 13,
          kind: "call.permission_denied",
          rpc: "/charter.v1.GrantService/IssueGrant",
          caller: "gateway-1",
          detail: "needs the role issuer",
        }),
      ).toBe(4);
      expect((await entries()).map((e) => [e.kind, e.caller])).toEqual([
        ["grant.issued", "orchestrator-1"],
        ["decision", "gateway-1"],
        ["grant.revoked", "orchestrator-1"],
        ["call.permission_denied", "gateway-1"],
      ]);
      expect(await store.getDecision("dec_c")).toMatchObject({ caller: "gateway-1" });
    });

    it("says how many records each unit appended once durable, as the log has them", async () => {
      const reported: number[] = [];
      const stop = store.onAuditAppended((records) => reported.push(records));
      const root = makeGrant("g-root");
      await store.putGrant(root);
      await store.putGrant(makeGrant("g-child", root));
      // Each report has arrived by the time the unit's promise resolves.
      expect(reported).toEqual([1, 1]);
      await store.commitDecision(makeDecision("dec_a"));
      await store.revokeGrant("g-root", "done", ISSUED_AT + 12);
      await Promise.all([1, 2, 3].map((i) => store.commitDecision(makeDecision(`dec_${i}`))));
      const total = reported.reduce((a, b) => a + b, 0);
      expect(total).toBe((await store.readAudit(0, 1000)).length);
      stop();
      await store.commitDecision(makeDecision("dec_after"));
      expect(reported.reduce((a, b) => a + b, 0)).toBe(total);
    });

    it("appends one chained record per grant event, decision and approval event", async () => {
      const root = makeGrant("g-root");
      await store.putGrant(root);
      await store.putGrant(root); // a no-op records nothing
      await store.putGrant(makeGrant("g-child", root));
      await store.commitDecision(makeDecision("dec_1"));
      await store.commitDecision(makeDecision("dec_1")); // idempotent: nothing more
      await store.createApprovalOnce(makeApproval("apr_1"), ISSUED_AT + 10);
      await store.decideApproval({
        approvalId: "apr_1",
        approver: "ana",
        outcome: "approve",
        at: ISSUED_AT + 11,
      });
      await store.revokeGrant("g-root", "done", ISSUED_AT + 12);
      expect((await entries()).map((e) => [e.seq, e.kind])).toEqual([
        [1, "grant.issued"],
        [2, "grant.delegated"],
        [3, "decision"],
        [4, "approval.created"],
        [5, "approval.approved"],
        [6, "grant.revoked"],
        [7, "grant.revoked"],
      ]);
      const rows = await store.readAudit(0, 100);
      let previous = { seq: 0, hash: GENESIS_HASH };
      for (const row of rows) {
        expect(auditLinkProblem(previous, row)).toBeUndefined();
        previous = row;
      }
      expect(await store.auditHead()).toEqual({ seq: 7, hash: rows.at(-1)?.hash });
      expect((await entries())[4]).toMatchObject({
        approvalId: "apr_1",
        actor: "ana",
        callDigest: "digest-apr_1",
      });
    });

    it("records a decision's ids and codes but never argument values", async () => {
      await store.createApprovalOnce(makeApproval("apr_1"), ISSUED_AT + 10);
      await store.commitDecision(
        makeDecision("dec_9", { decision: "deny", reasonCode: "RULE_DENY" }),
      );
      const text = (await store.readAudit(0, 100)).map((r) => r.entry).join("\n");
      expect(text).not.toContain("s3cr3t-value");
      expect((await entries()).at(-1)).toMatchObject({
        kind: "decision",
        decisionId: "dec_9",
        decision: "deny",
        reasonCode: "RULE_DENY",
        policyVersion: "policy-1",
      });
    });

    it("keeps one gap-free chain under concurrent appends", async () => {
      await Promise.all(
        Array.from({ length: 40 }, (_, i) => store.commitDecision(makeDecision(`dec_c${i}`))),
      );
      const rows = await store.readAudit(0, 1000);
      expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      let previous = { seq: 0, hash: GENESIS_HASH };
      for (const row of rows) {
        expect(auditLinkProblem(previous, row)).toBeUndefined();
        previous = row;
      }
    });

    it("reads a page after a sequence", async () => {
      for (let i = 0; i < 5; i++) await store.commitDecision(makeDecision(`dec_p${i}`));
      expect((await store.readAudit(2, 2)).map((r) => r.seq)).toEqual([3, 4]);
      expect(await store.readAudit(5, 10)).toEqual([]);
    });

    it("stores checkpoints once per seq, oldest first", async () => {
      expect(await store.auditHead()).toBeUndefined();
      const cp = { seq: 3, hash: "h3", at: ISSUED_AT, signature: "jws-3" };
      await store.putCheckpoint({ seq: 7, hash: "h7", at: ISSUED_AT + 1, signature: "jws-7" });
      await store.putCheckpoint(cp);
      await store.putCheckpoint({ ...cp, signature: "other" });
      expect(await store.listCheckpoints()).toEqual([
        cp,
        { seq: 7, hash: "h7", at: ISSUED_AT + 1, signature: "jws-7" },
      ]);
    });

    it("prunes whole segments before a checkpoint, keeping the anchor record and its checkpoint", async () => {
      for (let i = 0; i < 6; i++) await store.commitDecision(makeDecision(`dec_r${i}`));
      const rows = await store.readAudit(0, 100);
      const at = (seq: number) => rows[seq - 1]?.hash ?? "";
      const cp = (seq: number) => ({ seq, hash: at(seq), at: ISSUED_AT, signature: `jws-${seq}` });
      await store.putCheckpoint(cp(2));
      await store.putCheckpoint(cp(4));
      await store.putCheckpoint({ ...cp(5), hash: "not-the-hash" });
      // No checkpoint of record 3, and one that does not match record 5: nothing is deleted.
      await expectStoreError(store.pruneAudit(3), "NOT_FOUND");
      await expectStoreError(store.pruneAudit(5), "NOT_FOUND");
      expect(await store.readAudit(0, 100)).toEqual(rows);
      expect(await store.pruneAudit(4)).toEqual({ records: 3, checkpoints: 1 });
      expect(await store.readAudit(0, 100)).toEqual(rows.slice(3));
      expect((await store.listCheckpoints()).map((c) => c.seq)).toEqual([4, 5]);
      // The chain goes on from the kept head.
      await store.commitDecision(makeDecision("dec_after_prune"));
      const next = (await store.readAudit(6, 1))[0];
      expect(next?.seq).toBe(7);
      expect(
        auditLinkProblem({ seq: 6, hash: at(6) }, next ?? { seq: 0, entry: "", hash: "" }),
      ).toBeUndefined();
      expect(await store.pruneAudit(4)).toEqual({ records: 0, checkpoints: 0 });
    });
  });
}
