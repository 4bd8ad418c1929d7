import { beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/port.js";
import { expectStoreError } from "./contract-assert.js";
import { ISSUED_AT, makeApproval } from "./fixtures.js";

const T = ISSUED_AT + 10;

/** Approvals: created once per digest, decided by distinct approvers, expired, superseded, and their event feed. */
export function describeApprovalContract(current: () => Store): void {
  describe("approvals", () => {
    let store: Store;
    beforeEach(() => {
      store = current();
    });

    it("creates a pending approval once per call digest and round-trips it exactly", async () => {
      const draft = makeApproval("apr_1", { rule: "no-writes-after-untrusted" });
      expect(await store.createApprovalOnce(draft, T)).toStrictEqual({
        approval: draft.approval,
        created: true,
      });
      const again = await store.createApprovalOnce(
        makeApproval("apr_2", { callDigest: draft.approval.callDigest }),
        T + 1,
      );
      expect(again).toStrictEqual({ approval: draft.approval, created: false });
      expect(await store.getApproval("apr_1")).toStrictEqual({
        approval: draft.approval,
        argumentsJson: draft.argumentsJson,
      });
      expect(await store.getApproval("apr_2")).toBeUndefined();
    });

    it("creates exactly one approval when many callers race for one digest", async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.createApprovalOnce(makeApproval(`apr_r${i}`, { callDigest: "d-race" }), T),
        ),
      );
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(new Set(results.map((r) => r.approval.id)).size).toBe(1);
    });

    it("creates a new approval for a digest whose earlier approval is no longer live", async () => {
      await store.createApprovalOnce(makeApproval("apr_old", { callDigest: "d" }), T);
      await store.decideApproval({
        approvalId: "apr_old",
        approver: "ana",
        outcome: "reject",
        at: T + 1,
      });
      expect(
        await store.createApprovalOnce(makeApproval("apr_new", { callDigest: "d" }), T + 2),
      ).toMatchObject({ created: true, approval: { id: "apr_new" } });
    });

    it("approves with one approver when one is required, and refuses a second answer", async () => {
      await store.createApprovalOnce(makeApproval("apr_1"), T);
      const first = await store.decideApproval({
        approvalId: "apr_1",
        approver: "ana",
        outcome: "approve",
        note: "ok",
        at: T + 5,
      });
      expect(first).toMatchObject({
        ok: true,
        approval: {
          status: "approved",
          approvedBy: ["ana"],
          decidedAt: T + 5,
          decidedBy: "ana",
          note: "ok",
        },
      });
      const second = await store.decideApproval({
        approvalId: "apr_1",
        approver: "bo",
        outcome: "reject",
        at: T + 6,
      });
      expect(second).toMatchObject({
        ok: false,
        problem: "not_pending",
        approval: { status: "approved" },
      });
    });

    it("needs as many distinct approvers as required; the same approver twice does not count", async () => {
      await store.createApprovalOnce(makeApproval("apr_2of", { requiredApprovals: 2 }), T);
      expect(
        await store.decideApproval({
          approvalId: "apr_2of",
          approver: "ana",
          outcome: "approve",
          at: T + 1,
        }),
      ).toMatchObject({
        ok: true,
        approval: { status: "pending", approvedBy: ["ana"] },
      });
      expect(
        await store.decideApproval({
          approvalId: "apr_2of",
          approver: "ana",
          outcome: "approve",
          at: T + 2,
        }),
      ).toMatchObject({
        ok: false,
        problem: "already_answered",
      });
      expect(
        await store.decideApproval({
          approvalId: "apr_2of",
          approver: "bo",
          outcome: "approve",
          at: T + 3,
        }),
      ).toMatchObject({
        ok: true,
        approval: { status: "approved", approvedBy: ["ana", "bo"], decidedBy: "bo" },
      });
    });

    it("counts distinct approvers exactly under concurrency", async () => {
      await store.createApprovalOnce(makeApproval("apr_c", { requiredApprovals: 3 }), T);
      const votes = await Promise.all(
        ["a", "b", "c", "d", "a", "b"].map((who, i) =>
          store.decideApproval({
            approvalId: "apr_c",
            approver: who,
            outcome: "approve",
            at: T + i,
          }),
        ),
      );
      expect(votes.filter((v) => v.ok)).toHaveLength(3);
      // Which three win depends on who gets the lock first (on PostgreSQL, across connections); that three distinct do does not.
      const approval = (await store.getApproval("apr_c"))?.approval;
      expect(approval?.status).toBe("approved");
      expect(new Set(approval?.approvedBy).size).toBe(3);
      expect(approval?.approvedBy.every((who) => ["a", "b", "c", "d"].includes(who))).toBe(true);
    });

    it("one rejection rejects, even after approvals", async () => {
      await store.createApprovalOnce(makeApproval("apr_rej", { requiredApprovals: 2 }), T);
      await store.decideApproval({
        approvalId: "apr_rej",
        approver: "ana",
        outcome: "approve",
        at: T + 1,
      });
      expect(
        await store.decideApproval({
          approvalId: "apr_rej",
          approver: "bo",
          outcome: "reject",
          note: "no",
          at: T + 2,
        }),
      ).toMatchObject({
        ok: true,
        approval: { status: "rejected", decidedBy: "bo", note: "no", approvedBy: ["ana"] },
      });
    });

    it("ends an approval superseded, with the reason, when the re-check says so", async () => {
      await store.createApprovalOnce(makeApproval("apr_s"), T);
      const reason = { code: "GRANT_REVOKED", message: "revoked" } as const;
      expect(
        await store.decideApproval({
          approvalId: "apr_s",
          approver: "ana",
          outcome: "approve",
          at: T + 1,
          supersede: reason,
        }),
      ).toMatchObject({
        ok: true,
        approval: { status: "superseded", statusReason: reason },
      });
    });

    it("refuses to decide an unknown approval as NOT_FOUND", async () => {
      await expectStoreError(
        store.decideApproval({ approvalId: "nope", approver: "ana", outcome: "approve", at: T }),
        "NOT_FOUND",
      );
    });

    it("marks an approval expired, never rejected, once its time has run out", async () => {
      await store.createApprovalOnce(makeApproval("apr_e", { expiresAt: T + 100 }), T);
      expect(await store.expireApprovals(T + 99)).toBe(0);
      expect(
        await store.decideApproval({
          approvalId: "apr_e",
          approver: "ana",
          outcome: "approve",
          at: T + 100,
        }),
      ).toMatchObject({
        ok: false,
        problem: "not_pending",
        approval: { status: "expired" },
      });
      await store.createApprovalOnce(makeApproval("apr_e2", { expiresAt: T + 100 }), T);
      expect(await store.expireApprovals(T + 100)).toBe(1);
      expect((await store.getApproval("apr_e2"))?.approval.status).toBe("expired");
    });

    it("supersedes the live approvals of revoked grants only", async () => {
      await store.createApprovalOnce(makeApproval("apr_a", { grantId: "g-a" }), T);
      await store.createApprovalOnce(makeApproval("apr_b", { grantId: "g-b" }), T);
      await store.createApprovalOnce(makeApproval("apr_done", { grantId: "g-a" }), T);
      await store.decideApproval({
        approvalId: "apr_done",
        approver: "ana",
        outcome: "reject",
        at: T + 1,
      });
      expect(
        await store.supersedeApprovalsOf(
          ["g-a"],
          { code: "GRANT_REVOKED", message: "revoked" },
          T + 2,
        ),
      ).toBe(1);
      expect((await store.getApproval("apr_a"))?.approval).toMatchObject({
        status: "superseded",
        statusReason: { code: "GRANT_REVOKED" },
      });
      expect((await store.getApproval("apr_b"))?.approval.status).toBe("pending");
      expect((await store.getApproval("apr_done"))?.approval.status).toBe("rejected");
    });

    it("lists an owner's approvals newest first, filtered by status, a page at a time", async () => {
      for (let i = 0; i < 7; i++)
        await store.createApprovalOnce(makeApproval(`apr_${i}`, { createdAt: T + i }), T);
      await store.createApprovalOnce(makeApproval("apr_other", { owner: "someone-else" }), T);
      await store.decideApproval({
        approvalId: "apr_3",
        approver: "ana",
        outcome: "reject",
        at: T + 20,
      });
      const ids: string[] = [];
      let page = await store.listApprovals({ owner: "owner:zoë", limit: 3 });
      while (page.length > 0) {
        ids.push(...page.map((a) => a.id));
        const last = page.at(-1);
        if (!last) break;
        page = await store.listApprovals({
          owner: "owner:zoë",
          limit: 3,
          after: { createdAt: last.createdAt, id: last.id },
        });
      }
      expect(ids).toEqual(["apr_6", "apr_5", "apr_4", "apr_3", "apr_2", "apr_1", "apr_0"]);
      expect(
        (await store.listApprovals({ owner: "owner:zoë", status: "rejected", limit: 10 })).map(
          (a) => a.id,
        ),
      ).toEqual(["apr_3"]);
      expect(await store.listApprovals({ limit: 100 })).toHaveLength(8);
    });

    it("feeds every event in order with gap-free sequences, per owner, resumable after any sequence", async () => {
      expect(await store.lastApprovalSequence()).toBe(0);
      await store.createApprovalOnce(makeApproval("apr_1", { requiredApprovals: 2 }), T);
      await store.createApprovalOnce(makeApproval("apr_x", { owner: "other" }), T);
      await store.decideApproval({
        approvalId: "apr_1",
        approver: "ana",
        outcome: "approve",
        at: T + 1,
      });
      await store.decideApproval({
        approvalId: "apr_1",
        approver: "bo",
        outcome: "approve",
        at: T + 2,
      });
      const all = await store.approvalEvents(undefined, 0, 100);
      expect(all.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
      const mine = await store.approvalEvents("owner:zoë", 0, 100);
      expect(mine.map((e) => [e.kind, e.approval.status])).toEqual([
        ["created", "pending"],
        ["approver_added", "pending"],
        ["decided", "approved"],
      ]);
      expect(
        (await store.approvalEvents("owner:zoë", mine[0]?.sequence ?? 0, 100)).map(
          (e) => e.sequence,
        ),
      ).toEqual([3, 4]);
      expect(await store.approvalEvents("owner:zoë", 4, 100)).toEqual([]);
      expect(await store.lastApprovalSequence()).toBe(4);
    });
  });
}
