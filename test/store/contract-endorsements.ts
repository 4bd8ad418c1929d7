import { beforeEach, describe, expect, it } from "vitest";
import { endorsedDecider } from "../../src/core/endorsement.js";
import type { Store } from "../../src/store/port.js";
import { expectStoreError } from "./contract-assert.js";
import { ISSUED_AT, makeApproval, makeEndorsement } from "./fixtures.js";

const T = ISSUED_AT + 20;

/** Endorsements: recorded and listed, charged once per use under concurrency, never used when revoked, expired or spent. */
export function describeEndorsementContract(current: () => Store): void {
  describe("endorsements", () => {
    let store: Store;
    beforeEach(() => {
      store = current();
    });

    const mint = (
      id: string,
      endorsementIds: readonly string[],
      endorsers: readonly string[],
      callDigest = `digest-${id}`,
    ) =>
      store.approveByEndorsements({
        draft: makeApproval(id, { requiredApprovals: endorsers.length, callDigest }),
        endorsements: endorsementIds.map((e, i) =>
          makeEndorsement(e, { endorsedBy: endorsers[i] ?? "x" }),
        ),
        decidedBy: endorsedDecider(endorsementIds),
        now: T,
      });

    it("round-trips an endorsement, lists it newest first, and refuses the same id twice", async () => {
      const a = makeEndorsement("end_a", { rule: "rule-of-two" });
      const b = makeEndorsement("end_b", { owner: "owner:bo", createdAt: ISSUED_AT + 11 });
      await store.createEndorsement(a, "ui");
      await store.createEndorsement(b);
      expect(await store.getEndorsement("end_a")).toStrictEqual(a);
      expect(await store.getEndorsement("end_none")).toBeUndefined();
      await expectStoreError(store.createEndorsement(a), "CONFLICT");
      expect((await store.listEndorsements({ limit: 10 })).map((e) => e.id)).toEqual([
        "end_b",
        "end_a",
      ]);
      expect(
        (await store.listEndorsements({ owner: "owner:zoë", limit: 10 })).map((e) => e.id),
      ).toEqual(["end_a"]);
      const page = await store.listEndorsements({
        limit: 10,
        after: { createdAt: b.createdAt, id: b.id },
      });
      expect(page.map((e) => e.id)).toEqual(["end_a"]);
      const audit = await store.readAudit(0, 10);
      const created = audit.map((r) => JSON.parse(r.entry) as Record<string, unknown>);
      expect(created[0]).toMatchObject({
        kind: "endorsement.created",
        endorsementId: "end_a",
        approvalId: "apr_src",
        actor: "owner:zoë",
        caller: "ui",
      });
    });

    it("mints an approved approval and charges one use, in one unit, with events and audit records", async () => {
      await store.createEndorsement(makeEndorsement("end_a"));
      const approval = await mint("apr_m", ["end_a"], ["owner:zoë"]);
      expect(approval).toMatchObject({
        id: "apr_m",
        status: "approved",
        approvedBy: ["owner:zoë"],
        decidedBy: "endorsement:end_a",
        decidedAt: T,
      });
      expect((await store.getApproval("apr_m"))?.approval).toStrictEqual(approval);
      expect((await store.getEndorsement("end_a"))?.usedCalls).toBe(1);
      const events = await store.approvalEvents(undefined, 0, 10);
      expect(events.map((e) => e.kind)).toEqual(["created", "decided"]);
      const kinds = (await store.readAudit(0, 10)).map(
        (r) => (JSON.parse(r.entry) as { kind: string }).kind,
      );
      expect(kinds).toEqual(["endorsement.created", "approval.created", "approval.approved"]);
    });

    it("approves the live pending approval of the digest rather than a second one", async () => {
      await store.createEndorsement(makeEndorsement("end_a"));
      await store.createApprovalOnce(makeApproval("apr_p", { callDigest: "d-1" }), T);
      const approval = await store.approveByEndorsements({
        draft: makeApproval("apr_new", { callDigest: "d-1" }),
        endorsements: [makeEndorsement("end_a")],
        decidedBy: "endorsement:end_a",
        now: T,
      });
      expect(approval).toMatchObject({ id: "apr_p", status: "approved" });
      expect(await store.getApproval("apr_new")).toBeUndefined();
    });

    it("charges nothing when the digest's approval is approved already", async () => {
      await store.createEndorsement(makeEndorsement("end_a"));
      await mint("apr_m", ["end_a"], ["owner:zoë"], "d-same");
      const again = await mint("apr_m2", ["end_a"], ["owner:zoë"], "d-same");
      expect(again).toMatchObject({ id: "apr_m" });
      expect((await store.getEndorsement("end_a"))?.usedCalls).toBe(1);
    });

    it("writes nothing when one of two endorsements cannot be charged", async () => {
      await store.createEndorsement(makeEndorsement("end_a", { endorsedBy: "m1" }));
      await store.createEndorsement(
        makeEndorsement("end_b", { endorsedBy: "m2", maxCalls: 1, usedCalls: 1 }),
      );
      const before = await store.auditHead();
      expect(await mint("apr_m", ["end_a", "end_b"], ["m1", "m2"])).toBeUndefined();
      expect(await store.getApproval("apr_m")).toBeUndefined();
      expect((await store.getEndorsement("end_a"))?.usedCalls).toBe(0);
      expect(await store.auditHead()).toStrictEqual(before);
      expect(await store.approvalEvents(undefined, 0, 10)).toEqual([]);
    });

    it.each([
      ["revoked", { status: "revoked" as const, revokedAt: T - 1, revokedBy: "owner:zoë" }],
      ["expired", { expiresAt: T }],
      ["spent", { maxCalls: 2, usedCalls: 2 }],
    ])("never lists as live nor charges an endorsement %s", async (_what, overrides) => {
      await store.createEndorsement(makeEndorsement("end_x", overrides));
      expect(await store.liveEndorsements("g-root", "payments.refund", "owner", T)).toEqual([]);
      expect(await store.listEndorsements({ liveAt: T, limit: 10 })).toEqual([]);
      expect(await mint("apr_m", ["end_x"], ["owner:zoë"])).toBeUndefined();
      expect(await store.getApproval("apr_m")).toBeUndefined();
    });

    it("answers the live endorsements of exactly one grant, action and requirement", async () => {
      await store.createEndorsement(makeEndorsement("end_a"));
      await store.createEndorsement(makeEndorsement("end_g", { grantId: "g-child" }));
      await store.createEndorsement(makeEndorsement("end_c", { actionId: "payments.charge" }));
      await store.createEndorsement(makeEndorsement("end_r", { requirement: "manager" }));
      const live = await store.liveEndorsements("g-root", "payments.refund", "owner", T);
      expect(live.map((e) => e.id)).toEqual(["end_a"]);
    });

    it("charges a K-call endorsement at most K times when 2K uses race", async () => {
      await store.createEndorsement(makeEndorsement("end_k", { maxCalls: 5 }));
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => mint(`apr_race${i}`, ["end_k"], ["owner:zoë"])),
      );
      expect(results.filter((r) => r !== undefined)).toHaveLength(5);
      expect(await store.getEndorsement("end_k")).toMatchObject({ usedCalls: 5 });
    });

    it("prunes only the endorsements expired before the cut-off", async () => {
      await store.createEndorsement(makeEndorsement("end_old", { expiresAt: T - 5 }));
      await store.createEndorsement(makeEndorsement("end_now", { expiresAt: T }));
      expect(await store.pruneEndorsements(T)).toBe(1);
      expect(await store.getEndorsement("end_old")).toBeUndefined();
      expect(await store.getEndorsement("end_now")).toBeDefined();
    });

    it("revokes once, with its audit record; an unknown id is NOT_FOUND", async () => {
      await store.createEndorsement(makeEndorsement("end_a"));
      const first = await store.revokeEndorsement("end_a", "owner:zoë", T, "ui");
      expect(first).toMatchObject({
        revoked: true,
        endorsement: { status: "revoked", revokedAt: T, revokedBy: "owner:zoë" },
      });
      expect(await store.getEndorsement("end_a")).toStrictEqual(first.endorsement);
      const again = await store.revokeEndorsement("end_a", "other", T + 1);
      expect(again).toStrictEqual({ endorsement: first.endorsement, revoked: false });
      await expectStoreError(store.revokeEndorsement("end_none", "x", T), "NOT_FOUND");
      const kinds = (await store.readAudit(0, 10)).map(
        (r) => (JSON.parse(r.entry) as { kind: string }).kind,
      );
      expect(kinds).toEqual(["endorsement.created", "endorsement.revoked"]);
      expect(await mint("apr_m", ["end_a"], ["owner:zoë"])).toBeUndefined();
    });
  });
}
