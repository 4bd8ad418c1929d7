import { beforeEach, describe, expect, it } from "vitest";
import type { BudgetLimits, DecisionEffects, Store } from "../../src/store/port.js";
import { ISSUED_AT, makeApproval, makeDecision } from "./fixtures.js";

const T = ISSUED_AT + 10;
const charge = (grants: BudgetLimits[], actionId = "email.send"): DecisionEffects => ({
  budget: { actionId, grants },
});

/** The commit step's effects: budgets charged and approvals consumed atomically, only on allow, exactly once under concurrency. */
export function describeEffectsContract(current: () => Store): void {
  describe("commitDecision() effects", () => {
    let store: Store;
    let n = 0;
    const allow = (effects: DecisionEffects, overrides: Parameters<typeof makeDecision>[1] = {}) =>
      store.commitDecision(makeDecision(`dec_${n++}`, overrides), effects);
    beforeEach(() => {
      store = current();
    });

    it("charges maxCalls on every allow until it is spent, then records the allow as a deny LIMIT_EXCEEDED", async () => {
      const effects = charge([{ grantId: "g", maxCalls: 3 }]);
      const outcomes = [];
      for (let i = 0; i < 5; i++) outcomes.push((await allow(effects)).kind);
      expect(outcomes).toEqual(["committed", "committed", "committed", "refused", "refused"]);
      expect(await store.getBudgetUsage("g")).toEqual({ calls: 3, perAction: {} });
      expect(await store.getDecision(`dec_${n - 1}`)).toMatchObject({
        decision: "deny",
        reasonCode: "LIMIT_EXCEEDED",
      });
    });

    it("charges maxCallsPerAction per action id", async () => {
      const limits = [{ grantId: "g", maxCallsPerAction: 2 }];
      expect((await allow(charge(limits, "a"))).kind).toBe("committed");
      expect((await allow(charge(limits, "a"))).kind).toBe("committed");
      expect(await allow(charge(limits, "a"))).toMatchObject({
        kind: "refused",
        reasonCode: "LIMIT_EXCEEDED",
      });
      expect((await allow(charge(limits, "b"))).kind).toBe("committed");
      expect(await store.getBudgetUsage("g")).toEqual({ calls: 0, perAction: { a: 2, b: 1 } });
    });

    it("refuses every call of a limit of 0 (maxCalls and maxCallsPerAction)", async () => {
      expect(await allow(charge([{ grantId: "g", maxCalls: 0 }]))).toMatchObject({
        kind: "refused",
        reasonCode: "LIMIT_EXCEEDED",
      });
      expect(await allow(charge([{ grantId: "g", maxCallsPerAction: 0 }]))).toMatchObject({
        kind: "refused",
        reasonCode: "LIMIT_EXCEEDED",
      });
      expect(await store.getBudgetUsage("g")).toEqual({ calls: 0, perAction: {} });
    });

    it("never charges a deny", async () => {
      await store.commitDecision(
        makeDecision("dec_deny", { decision: "deny", reasonCode: "NOT_GRANTED" }),
        charge([{ grantId: "g", maxCalls: 1 }]),
      );
      expect(await store.getBudgetUsage("g")).toEqual({ calls: 0, perAction: {} });
    });

    it("charges every ancestor, and a spent ancestor refuses without charging the child", async () => {
      const childA = charge([
        { grantId: "child-a", maxCalls: 10 },
        { grantId: "root", maxCalls: 2 },
      ]);
      const childB = charge([
        { grantId: "child-b", maxCalls: 10 },
        { grantId: "root", maxCalls: 2 },
      ]);
      expect((await allow(childA)).kind).toBe("committed");
      expect((await allow(childB)).kind).toBe("committed");
      expect((await allow(childA)).kind).toBe("refused");
      expect(await store.getBudgetUsage("root")).toMatchObject({ calls: 2 });
      expect(await store.getBudgetUsage("child-a")).toMatchObject({ calls: 1 });
    });

    it("never over-spends under concurrency", async () => {
      const effects = charge([{ grantId: "g", maxCalls: 10 }]);
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => allow(effects)));
      expect(outcomes.filter((o) => o.kind === "committed")).toHaveLength(10);
      expect(await store.getBudgetUsage("g")).toMatchObject({ calls: 10 });
    });

    it("answers the first outcome again for the same decision id and charges nothing more", async () => {
      const effects = charge([{ grantId: "g", maxCalls: 1 }]);
      const record = makeDecision("dec_same");
      expect((await store.commitDecision(record, effects)).kind).toBe("committed");
      expect((await store.commitDecision(record, effects)).kind).toBe("committed");
      expect(await store.getBudgetUsage("g")).toMatchObject({ calls: 1 });
      const refused = makeDecision("dec_refused");
      expect((await store.commitDecision(refused, effects)).kind).toBe("refused");
      expect((await store.commitDecision(refused, effects)).kind).toBe("refused");
    });

    describe("approval consumption", () => {
      beforeEach(async () => {
        await store.createApprovalOnce(makeApproval("apr_1", { callDigest: "d1" }), T);
        await store.decideApproval({
          approvalId: "apr_1",
          approver: "ana",
          outcome: "approve",
          at: T + 1,
        });
      });
      const use = { approval: { approvalId: "apr_1", callDigest: "d1" } };

      it("consumes an approved approval once; a second use is APPROVAL_CONSUMED", async () => {
        expect((await allow(use, { approvalId: "apr_1", callDigest: "d1" })).kind).toBe(
          "committed",
        );
        expect((await store.getApproval("apr_1"))?.approval.status).toBe("consumed");
        expect(await allow(use, { approvalId: "apr_1", callDigest: "d1" })).toMatchObject({
          kind: "refused",
          reasonCode: "APPROVAL_CONSUMED",
        });
      });

      it("consumes it exactly once when many use it at the same time", async () => {
        const outcomes = await Promise.all(
          Array.from({ length: 10 }, () => allow(use, { approvalId: "apr_1", callDigest: "d1" })),
        );
        expect(outcomes.filter((o) => o.kind === "committed")).toHaveLength(1);
      });

      it("refuses an approval whose time ran out as APPROVAL_EXPIRED and marks it expired", async () => {
        expect(
          await allow(use, { approvalId: "apr_1", callDigest: "d1", decidedAt: ISSUED_AT + 310 }),
        ).toMatchObject({
          kind: "refused",
          reasonCode: "APPROVAL_EXPIRED",
        });
        expect((await store.getApproval("apr_1"))?.approval.status).toBe("expired");
      });

      it("refuses an approval for another digest and leaves it unused", async () => {
        expect((await allow({ approval: { approvalId: "apr_1", callDigest: "other" } })).kind).toBe(
          "refused",
        );
        expect((await store.getApproval("apr_1"))?.approval.status).toBe("approved");
      });

      it("leaves the approval unused when the budget refuses the allow", async () => {
        const both = { ...use, ...charge([{ grantId: "g", maxCalls: 1 }]) };
        await allow(charge([{ grantId: "g", maxCalls: 1 }]));
        expect(await allow(both, { approvalId: "apr_1", callDigest: "d1" })).toMatchObject({
          kind: "refused",
          reasonCode: "LIMIT_EXCEEDED",
        });
        expect((await store.getApproval("apr_1"))?.approval.status).toBe("approved");
      });
    });
  });
}
