import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ApprovalLink, Store } from "../../src/store/port.js";
import { expectStoreError } from "./contract-assert.js";
import { ISSUED_AT, makeDecision } from "./fixtures.js";

const hashOf = (token: string) => createHash("sha256").update(token).digest("hex");

function makeLink(token: string, overrides: Partial<ApprovalLink> = {}): ApprovalLink {
  return {
    tokenHash: hashOf(token),
    approvalId: "apr-1",
    approver: "ana@example.com",
    createdAt: ISSUED_AT,
    expiresAt: ISSUED_AT + 900,
    ...overrides,
  };
}

/** Single-use approval links: hashes only, one redemption each, none once expired. */
export function describeApprovalLinkContract(current: () => Store): void {
  describe("approval links", () => {
    it("round-trips a link by its hash; an unknown hash is undefined", async () => {
      const store = current();
      const link = makeLink("tok-a");
      await store.createApprovalLink(link);
      expect(await store.getApprovalLink(link.tokenHash)).toStrictEqual(link);
      expect(await store.getApprovalLink(hashOf("tok-other"))).toBeUndefined();
    });

    it("refuses a second link with the same hash as CONFLICT and keeps the first", async () => {
      const store = current();
      await store.createApprovalLink(makeLink("tok-a"));
      await expectStoreError(
        store.createApprovalLink(makeLink("tok-a", { approver: "eve@example.com" })),
        "CONFLICT",
      );
      expect((await store.getApprovalLink(hashOf("tok-a")))?.approver).toBe("ana@example.com");
    });

    it("redeems a link once: the second redemption answers used", async () => {
      const store = current();
      const link = makeLink("tok-a");
      await store.createApprovalLink(link);
      expect(await store.redeemApprovalLink(link.tokenHash, ISSUED_AT + 10)).toStrictEqual({
        ok: true,
        link: { ...link, usedAt: ISSUED_AT + 10 },
      });
      expect(await store.redeemApprovalLink(link.tokenHash, ISSUED_AT + 11)).toStrictEqual({
        ok: false,
        problem: "used",
        link: { ...link, usedAt: ISSUED_AT + 10 },
      });
    });

    it("gives one of many concurrent redemptions the link", async () => {
      const store = current();
      const link = makeLink("tok-race");
      await store.createApprovalLink(link);
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, () => store.redeemApprovalLink(link.tokenHash, ISSUED_AT + 5)),
      );
      expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
      expect(outcomes.filter((o) => !o.ok && o.problem === "used")).toHaveLength(7);
    });

    it("refuses an expired link and leaves it unused; an unknown hash is unknown", async () => {
      const store = current();
      const link = makeLink("tok-a");
      await store.createApprovalLink(link);
      expect(await store.redeemApprovalLink(link.tokenHash, link.expiresAt)).toStrictEqual({
        ok: false,
        problem: "expired",
        link,
      });
      expect(await store.getApprovalLink(link.tokenHash)).toStrictEqual(link);
      expect(await store.redeemApprovalLink(hashOf("nope"), ISSUED_AT)).toStrictEqual({
        ok: false,
        problem: "unknown",
      });
    });

    it("prunes the links that expired before a time, used or not, and keeps the others", async () => {
      const store = current();
      await store.createApprovalLink(makeLink("old", { expiresAt: ISSUED_AT + 10 }));
      await store.createApprovalLink(
        makeLink("used", { expiresAt: ISSUED_AT + 20, usedAt: ISSUED_AT }),
      );
      await store.createApprovalLink(makeLink("live", { expiresAt: ISSUED_AT + 900 }));
      expect(await store.pruneApprovalLinks(ISSUED_AT + 21)).toBe(2);
      expect(await store.getApprovalLink(hashOf("old"))).toBeUndefined();
      expect(await store.getApprovalLink(hashOf("used"))).toBeUndefined();
      expect(await store.getApprovalLink(hashOf("live"))).toBeDefined();
      expect(await store.pruneApprovalLinks(ISSUED_AT + 21)).toBe(0);
    });

    it("reads the run of the call an approval holds, from the decision that held it", async () => {
      const store = current();
      const held = { decision: "require_approval", approvalId: "apr-run" } as const;
      await store.commitDecision(makeDecision("d-1", { ...held, runId: "run-7", stepKey: "k" }));
      await store.commitDecision(makeDecision("d-2", { ...held, decisionId: "d-2" }));
      await store.commitDecision(
        makeDecision("d-3", { decision: "require_approval", approvalId: "apr-none" }),
      );
      expect(await store.approvalRun("apr-run")).toBe("run-7");
      expect(await store.approvalRun("apr-none")).toBeUndefined();
      expect(await store.approvalRun("apr-unknown")).toBeUndefined();
    });
  });
}
