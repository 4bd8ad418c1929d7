import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TaskGrant } from "../../src/core/grant.js";
import type { StoreOperations } from "../../src/store/guard.js";
import type { DecisionRecord, Store } from "../../src/store/port.js";
import { describeApprovalContract } from "./contract-approvals.js";
import { describeApprovalLinkContract } from "./contract-links.js";
import { expectStoreError } from "./contract-assert.js";
import { describeAuditContract } from "./contract-audit.js";
import { describeEndorsementContract } from "./contract-endorsements.js";
import { describeStepsContract } from "./contract-steps.js";
import { describeEffectsContract } from "./contract-effects.js";
import { describeRunsContract } from "./contract-runs.js";
import { describeReplayInputsContract } from "./contract-replay.js";
import {
  ISSUED_AT,
  makeApiKey,
  makeApproval,
  makeDecision,
  makeEndorsement,
  makeGrant,
  makeKey,
} from "./fixtures.js";

/** An adapter under test: `open` answers a fresh, empty store each time it is called. */
export interface StoreUnderTest {
  readonly name: string;
  open(): Promise<Store>;
  /** Runs after each test, once the store is closed. */
  cleanup?(): Promise<void> | void;
}

export { expectStoreError, rejection } from "./contract-assert.js";

/** The behaviour every Store adapter must show, run against `adapter`. */
export function describeStoreContract(adapter: StoreUnderTest): void {
  describe(`Store contract: ${adapter.name}`, () => {
    let store: Store;

    beforeEach(async () => {
      store = await adapter.open();
    });

    afterEach(async () => {
      await store.close();
      await adapter.cleanup?.();
    });

    describe("grants", () => {
      const root = makeGrant("g-root");
      const child = makeGrant("g-child", root, {
        mode: "shadow",
        limits: { maxDelegationDepth: 1 },
        caveats: {},
      });

      it("round-trips root and delegated grants exactly, unrevoked", async () => {
        await store.putGrant(root);
        await store.putGrant(child);
        expect(await store.getGrant("g-root")).toStrictEqual({ grant: root });
        expect(await store.getGrant("g-child")).toStrictEqual({ grant: child });
      });

      it("treats a re-put of equal content as a no-op, whatever its key order", async () => {
        await store.putGrant(root);
        const reordered = Object.fromEntries(
          Object.entries(root).reverse(),
        ) as unknown as TaskGrant;
        await store.putGrant(root);
        await store.putGrant(reordered);
        expect(await store.getGrant("g-root")).toStrictEqual({ grant: root });
      });

      it("refuses a re-put with other content as CONFLICT and keeps the first", async () => {
        await store.putGrant(root);
        const widened = { ...root, allowed: [...root.allowed, "files.read"] };
        const err = await expectStoreError(store.putGrant(widened), "CONFLICT");
        expect(err.message).toContain("g-root");
        expect(await store.getGrant("g-root")).toStrictEqual({ grant: root });
      });

      it("answers undefined for an unknown id", async () => {
        await store.putGrant(root);
        expect(await store.getGrant("g-unknown")).toBeUndefined();
      });
    });

    describe("listLiveGrants()", () => {
      it("pages the grants neither revoked nor expired, in id order, after an id", async () => {
        const grants = ["g-c", "g-a", "g-e", "g-b", "g-d"].map((id) => makeGrant(id));
        for (const g of grants) await store.putGrant(g);
        await store.putGrant(makeGrant("g-old", undefined, { expiresAt: ISSUED_AT + 10 }));
        await store.revokeGrant("g-d", "withdrawn: test", ISSUED_AT + 1);
        const ids = (page: TaskGrant[]) => page.map((g) => g.id);
        const now = ISSUED_AT + 60;
        expect(ids(await store.listLiveGrants("", now, 2))).toEqual(["g-a", "g-b"]);
        expect(ids(await store.listLiveGrants("g-b", now, 2))).toEqual(["g-c", "g-e"]);
        expect(await store.listLiveGrants("g-e", now, 2)).toEqual([]);
        expect((await store.listLiveGrants("", now, 1))[0]).toStrictEqual(
          grants.find((g) => g.id === "g-a"),
        );
        expect(ids(await store.listLiveGrants("", ISSUED_AT + 5, 10))).toContain("g-old");
      });
    });

    describe("revocation", () => {
      // root ─┬─ a ── a1 ── a1x
      //       └─ b
      const root = makeGrant("r");
      const a = makeGrant("a", root);
      const b = makeGrant("b", root);
      const a1 = makeGrant("a1", a);
      const a1x = makeGrant("a1x", a1);

      beforeEach(async () => {
        for (const g of [root, a, b, a1, a1x]) await store.putGrant(g);
      });

      async function revokedIds(): Promise<string[]> {
        const ids: string[] = [];
        for (const id of ["r", "a", "b", "a1", "a1x"])
          if ((await store.getGrant(id))?.revokedAt !== undefined) ids.push(id);
        return ids;
      }

      it("revokes a grant, its children and grandchildren, but not its siblings or parents", async () => {
        const ids = await store.revokeGrant("a", "compromised", 1_750_000_100);
        expect([...ids].sort()).toEqual(["a", "a1", "a1x"]);
        expect(await revokedIds()).toEqual(["a", "a1", "a1x"]);
        expect(await store.getGrant("a1x")).toStrictEqual({
          grant: a1x,
          revokedAt: 1_750_000_100,
          revokedReason: "compromised",
        });
        expect(await store.getGrant("b")).toStrictEqual({ grant: b });
      });

      it("revokes only the grant itself when it has no descendants", async () => {
        expect(await store.revokeGrant("b", "done", 1_750_000_100)).toEqual(["b"]);
        expect(await revokedIds()).toEqual(["b"]);
      });

      it("answers already-revoked ids again but keeps their first time and reason", async () => {
        await store.revokeGrant("a1", "first", 1_750_000_100);
        const ids = await store.revokeGrant("r", "second", 1_750_000_200);
        expect([...ids].sort()).toEqual(["a", "a1", "a1x", "b", "r"]);
        expect(await store.getGrant("a1")).toMatchObject({
          revokedAt: 1_750_000_100,
          revokedReason: "first",
        });
        expect(await store.getGrant("a1x")).toMatchObject({
          revokedAt: 1_750_000_100,
          revokedReason: "first",
        });
        expect(await store.getGrant("a")).toMatchObject({
          revokedAt: 1_750_000_200,
          revokedReason: "second",
        });
        expect([...(await store.revokeGrant("a1", "third", 1_750_000_300))].sort()).toEqual([
          "a1",
          "a1x",
        ]);
        expect(await store.getGrant("a1")).toMatchObject({
          revokedAt: 1_750_000_100,
          revokedReason: "first",
        });
      });

      it("refuses to revoke an unknown grant as NOT_FOUND", async () => {
        const err = await expectStoreError(
          store.revokeGrant("nope", "x", 1_750_000_100),
          "NOT_FOUND",
        );
        expect(err.message).toContain("nope");
        expect(await revokedIds()).toEqual([]);
      });

      it("keeps a revoked grant revoked when it is put again", async () => {
        await store.revokeGrant("b", "done", 1_750_000_100);
        await store.putGrant(b);
        expect(await store.getGrant("b")).toStrictEqual({
          grant: b,
          revokedAt: 1_750_000_100,
          revokedReason: "done",
        });
      });

      it("anyRevoked() is true only when some listed id is revoked", async () => {
        expect(await store.anyRevoked([])).toBe(false);
        expect(await store.anyRevoked(["r", "a", "a1"])).toBe(false);
        await store.revokeGrant("a1", "x", 1_750_000_100);
        expect(await store.anyRevoked(["r", "a"])).toBe(false);
        expect(await store.anyRevoked(["unknown", "b"])).toBe(false);
        expect(await store.anyRevoked(["r", "a", "a1"])).toBe(true);
        expect(await store.anyRevoked(["a1x"])).toBe(true);
        expect(await store.anyRevoked(["unknown", "a1x"])).toBe(true);
      });

      it("anyRevoked() answers for thousands of ids at once", async () => {
        const many = Array.from({ length: 20_000 }, (_, i) => `unknown-${i}`);
        expect(await store.anyRevoked(many)).toBe(false);
        await store.revokeGrant("b", "x", 1_750_000_100);
        expect(await store.anyRevoked([...many, "b"])).toBe(true);
      });
    });

    describe("retention", () => {
      it("prunes grants expired before the cutoff, keeping the ancestors of a grant still kept and their revocation", async () => {
        const T = 1_750_000_000;
        const oldRoot = makeGrant("old", undefined, { expiresAt: T - 10 });
        const parent = makeGrant("parent", undefined, { expiresAt: T - 10 });
        const live = makeGrant("live", parent, { expiresAt: T + 100 });
        const lastSecond = makeGrant("edge", undefined, { expiresAt: T });
        for (const g of [oldRoot, parent, live, lastSecond]) await store.putGrant(g);
        await store.revokeGrant("parent", "compromised", T - 20);
        expect(await store.pruneGrants(T)).toBe(1);
        expect(await store.getGrant("old")).toBeUndefined();
        expect(await store.getGrant("edge")).toBeDefined();
        expect((await store.getGrant("parent"))?.revokedReason).toBe("compromised");
        expect(await store.anyRevoked(live.chain)).toBe(true);
        expect(await store.pruneGrants(T)).toBe(0);
        expect(await store.pruneGrants(T + 101)).toBe(3);
      });

      it("prunes a grant's row only: its approvals, decisions and audit records stay, and the audit chain is unchanged", async () => {
        const root = makeGrant("g-root");
        await store.putGrant(root, "caller:ops");
        await store.createApprovalOnce(makeApproval("apr_kept"), root.issuedAt + 10);
        await store.commitDecision(makeDecision("dec_kept"));
        const before = await store.readAudit(0, 1000);
        expect(await store.pruneGrants(root.expiresAt + 1)).toBe(1);
        expect(await store.getGrant("g-root")).toBeUndefined();
        expect((await store.getApproval("apr_kept"))?.approval.grantId).toBe("g-root");
        expect(await store.getDecision("dec_kept")).toBeDefined();
        expect(await store.readAudit(0, 1000)).toEqual(before);
      });

      it("prunes the step index of a pruned grant, keeping its decision, and no other grant's steps", async () => {
        const root = makeGrant("g-stepped");
        const kept = makeGrant("g-kept", undefined, { expiresAt: root.expiresAt + 100 });
        for (const g of [root, kept]) await store.putGrant(g);
        const slot = {
          runId: "r",
          stepKey: '["tool_call","t"]',
          fingerprint: "f",
          verdictJson: '{"decision":"deny"}',
        };
        for (const g of [root, kept]) {
          await store.commitDecision(
            makeDecision(`dec_${g.id}`, {
              grantId: g.id,
              decision: "deny",
              reasonCode: "NOT_GRANTED",
              runId: "r",
              stepKey: slot.stepKey,
            }),
            {
              step: slot,
            },
          );
        }
        expect(await store.pruneGrants(root.expiresAt + 1)).toBe(1);
        expect(await store.getStep("g-stepped", "r", slot.stepKey)).toBeUndefined();
        expect(await store.getDecision("dec_g-stepped")).toBeDefined();
        expect(await store.getStep("g-kept", "r", slot.stepKey)).toMatchObject({
          decisionId: "dec_g-kept",
        });
      });
    });

    describe("keys", () => {
      it("lists no keys in a fresh store", async () => {
        expect(await store.listKeys()).toEqual([]);
      });

      it("lists keys oldest first, whatever the insertion order, and round-trips them", async () => {
        const keys = [makeKey("k2", 200), makeKey("k3", 300, 350), makeKey("k1", 100)];
        for (const k of keys) await store.insertKey(k);
        expect(await store.listKeys()).toStrictEqual([keys[2], keys[0], keys[1]]);
      });

      it("refuses a duplicate kid as CONFLICT and keeps the first key", async () => {
        const first = makeKey("k1", 100);
        await store.insertKey(first);
        const err = await expectStoreError(
          store.insertKey({ ...makeKey("k1", 200), publicJwk: "{}" }),
          "CONFLICT",
        );
        expect(err.message).toContain("k1");
        expect(await store.listKeys()).toStrictEqual([first]);
      });

      it("retires a key, never moving its retirement later", async () => {
        await store.insertKey(makeKey("k1", 100));
        await store.insertKey(makeKey("k2", 200));
        await store.retireKey("k1", 500);
        expect(await store.listKeys()).toStrictEqual([makeKey("k1", 100, 500), makeKey("k2", 200)]);
        await store.retireKey("k1", 900);
        expect((await store.listKeys())[0]?.retiredAt).toBe(500);
        await store.retireKey("k1", 400);
        expect((await store.listKeys())[0]?.retiredAt).toBe(400);
      });

      it("insertKeyUnlessActive() adds a key only while no key is active", async () => {
        expect(await store.insertKeyUnlessActive(makeKey("k1", 200))).toBe(true);
        expect(await store.insertKeyUnlessActive(makeKey("k0", 100))).toBe(false);
        expect(await store.listKeys()).toStrictEqual([makeKey("k1", 200)]);
        await store.retireKey("k1", 300);
        expect(await store.insertKeyUnlessActive(makeKey("k2", 400))).toBe(true);
        expect((await store.listKeys()).map((k) => k.kid)).toEqual(["k1", "k2"]);
      });

      it("insertKeyUnlessActive() refuses a duplicate kid as CONFLICT", async () => {
        await store.insertKey(makeKey("k1", 100, 150));
        await expectStoreError(store.insertKeyUnlessActive(makeKey("k1", 200)), "CONFLICT");
        expect(await store.listKeys()).toStrictEqual([makeKey("k1", 100, 150)]);
      });

      it("insertKeyUnlessActive() stores exactly one of many concurrent first keys", async () => {
        const added = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            store.insertKeyUnlessActive(makeKey(`k${i}`, 100 - i)),
          ),
        );
        expect(added.filter(Boolean)).toHaveLength(1);
        expect(await store.listKeys()).toHaveLength(1);
      });

      it("refuses to retire an unknown key as NOT_FOUND", async () => {
        await expectStoreError(store.retireKey("nope", 500), "NOT_FOUND");
      });
    });

    describe("decisions", () => {
      const allow = makeDecision("dec_1");
      const deny = makeDecision("dec_2", {
        grantId: "",
        rootId: "",
        subject: "",
        actionId: "",
        callDigest: "",
        decision: "deny",
        reasonCode: "GRANT_INVALID",
      });
      const approved = makeDecision("dec_3", { approvalId: "apr_1" });

      it("round-trips decisions exactly, with and without their optional fields", async () => {
        for (const d of [allow, deny, approved]) await store.commitDecision(d);
        expect(await store.getDecision("dec_1")).toStrictEqual(allow);
        expect(await store.getDecision("dec_2")).toStrictEqual(deny);
        expect(await store.getDecision("dec_3")).toStrictEqual(approved);
      });

      it("round-trips a decision's shadow policy version and flip, and a shadow version alone", async () => {
        const flipped = makeDecision("dec_s1", {
          shadowPolicyVersion: "candidate-1",
          shadowFlip: { to: "deny", reasonCode: "EXPLICIT_DENY", rule: "a:web.search[0]" },
        });
        const uncomposable = makeDecision("dec_s2", {
          shadowPolicyVersion: "candidate-1",
          shadowFlip: { to: "deny", reasonCode: "UNKNOWN_PROFILE" },
        });
        const agreed = makeDecision("dec_s3", { shadowPolicyVersion: "candidate-1" });
        for (const d of [flipped, uncomposable, agreed]) await store.commitDecision(d);
        expect(await store.getDecision("dec_s1")).toStrictEqual(flipped);
        expect(await store.getDecision("dec_s2")).toStrictEqual(uncomposable);
        expect(await store.getDecision("dec_s3")).toStrictEqual(agreed);
      });

      it("answers undefined for an unknown decision id", async () => {
        await store.commitDecision(allow);
        expect(await store.getDecision("dec_unknown")).toBeUndefined();
      });

      it("treats committing the same record again as a no-op, whatever its key order", async () => {
        await store.commitDecision(allow);
        await store.commitDecision(allow);
        await store.commitDecision(
          Object.fromEntries(Object.entries(allow).reverse()) as unknown as DecisionRecord,
        );
        expect(await store.getDecision("dec_1")).toStrictEqual(allow);
      });

      const others: [string, Partial<DecisionRecord>][] = [
        ["another decision", { decision: "deny", reasonCode: "NOT_GRANTED" }],
        ["another time", { decidedAt: allow.decidedAt + 1 }],
        ["another call digest", { callDigest: "sha256:other" }],
        ["an approval id added", { approvalId: "apr_9" }],
        ["another policy version", { policyVersion: "policy-2" }],
      ];

      it.each(others)(
        "refuses other content (%s) under a recorded id as CONFLICT and keeps the first",
        async (_what, change) => {
          await store.commitDecision(allow);
          const err = await expectStoreError(
            store.commitDecision({ ...allow, ...change }),
            "CONFLICT",
          );
          expect(err.message).toContain("dec_1");
          expect(await store.getDecision("dec_1")).toStrictEqual(allow);
        },
      );

      it("refuses a record that drops an optional field as CONFLICT", async () => {
        await store.commitDecision(deny);
        const { reasonCode: _dropped, ...withoutReason } = deny;
        await expectStoreError(store.commitDecision(withoutReason), "CONFLICT");
        expect(await store.getDecision("dec_2")).toStrictEqual(deny);
      });
    });

    describe("api keys", () => {
      it("round-trips keys, finds them by hash only, and revokes keeping the first time", async () => {
        expect(await store.hasActiveApiKey()).toBe(false);
        const a = makeApiKey("key_a", { roles: ["gateway"] });
        const b = makeApiKey("key_b", {
          principal: "ops",
          roles: ["admin", "auditor"],
          createdAt: 20,
        });
        await store.createApiKey(a);
        await store.createApiKey(b);
        expect(await store.listApiKeys()).toStrictEqual([a, b]);
        expect(await store.findApiKeyByHash(b.secretHash)).toStrictEqual(b);
        expect(await store.findApiKeyByHash("f".repeat(64))).toBeUndefined();
        expect(await store.hasActiveApiKey()).toBe(true);
        await store.revokeApiKey("key_a", 30);
        await store.revokeApiKey("key_a", 40);
        expect(await store.findApiKeyByHash(a.secretHash)).toStrictEqual({ ...a, revokedAt: 30 });
        await store.revokeApiKey("key_b", 50);
        expect(await store.hasActiveApiKey()).toBe(false);
      });

      it("refuses a second key with the same id or hash as CONFLICT, and an unknown id to revoke as NOT_FOUND", async () => {
        const a = makeApiKey("key_a");
        await store.createApiKey(a);
        await expectStoreError(
          store.createApiKey({ ...a, secretHash: "e".repeat(64) }),
          "CONFLICT",
        );
        await expectStoreError(store.createApiKey({ ...a, id: "key_other" }), "CONFLICT");
        await expectStoreError(store.revokeApiKey("key_nope", 1), "NOT_FOUND");
      });

      it("records that protected mode ended with the first key, and keeps it after every key is revoked", async () => {
        expect(await store.protectedModeEnded()).toBe(false);
        await store.createApiKey(makeApiKey("key_a"));
        expect(await store.protectedModeEnded()).toBe(true);
        await store.revokeApiKey("key_a", 30);
        expect(await store.hasActiveApiKey()).toBe(false);
        expect(await store.protectedModeEnded()).toBe(true);
      });
    });

    describe("store meta", () => {
      it("reads what was written, replaces it, and answers undefined for a name never written", async () => {
        expect(await store.readMeta("auth_mode")).toBeUndefined();
        await store.writeMeta("auth_mode", "none");
        expect(await store.readMeta("auth_mode")).toBe("none");
        await store.writeMeta("auth_mode", "keys");
        expect(await store.readMeta("auth_mode")).toBe("keys");
        // A claim keeps what is there: of claims made at once, every one answers the first's value.
        const claims = await Promise.all(["a", "b", "c"].map((v) => store.claimMeta("claimed", v)));
        expect(new Set(claims).size).toBe(1);
        expect(await store.readMeta("claimed")).toBe(claims[0]);
        expect(await store.claimMeta("auth_mode", "none")).toBe("keys");
      });
    });

    describe("rewrapKey()", () => {
      it("replaces the private half only when it still holds the expected text", async () => {
        const key = makeKey("k", 1);
        await store.insertKey(key);
        await store.rewrapKey("k", key.privateJwk, "sealed");
        expect((await store.listKeys())[0]?.privateJwk).toBe("sealed");
        await expectStoreError(store.rewrapKey("k", key.privateJwk, "again"), "CONFLICT");
        await expectStoreError(store.rewrapKey("nope", "a", "b"), "NOT_FOUND");
      });
    });
    describeApprovalContract(() => store);
    describeEndorsementContract(() => store);
    describeApprovalLinkContract(() => store);
    describeEffectsContract(() => store);
    describeAuditContract(() => store);
    describeStepsContract(() => store);
    describeRunsContract(() => store);
    describeReplayInputsContract(() => store);

    describe("after close()", () => {
      // Typed over the port's operations, so a new operation without a case here fails compilation.
      const calls: { readonly [K in keyof StoreOperations]: (s: Store) => Promise<unknown> } = {
        putGrant: (s) => s.putGrant(makeGrant("late")),
        getGrant: (s) => s.getGrant("g"),
        getGrantOrigin: (s) => s.getGrantOrigin("g"),
        revokeGrant: (s) => s.revokeGrant("g", "x", 1),
        anyRevoked: (s) => s.anyRevoked(["g"]),
        pruneGrants: (s) => s.pruneGrants(1),
        listLiveGrants: (s) => s.listLiveGrants("", 1, 1),
        listKeys: (s) => s.listKeys(),
        insertKey: (s) => s.insertKey(makeKey("late", 1)),
        insertKeyUnlessActive: (s) => s.insertKeyUnlessActive(makeKey("late", 1)),
        retireKey: (s) => s.retireKey("k", 1),
        commitDecision: (s) => s.commitDecision(makeDecision("dec_late")),
        getDecision: (s) => s.getDecision("dec_1"),
        pruneDecisionInputs: (s) => s.pruneDecisionInputs(1),
        readReplayPage: (s) => s.readReplayPage(0, 10, 10),
        getStep: (s) => s.getStep("g", "run", "step"),
        readRun: (s) =>
          s.readRun({ labelsFrom: [{ grantId: "g" }], after: [], windows: [], now: 1 }),
        reportResult: (s) =>
          s.reportResult({
            decisionId: "dec_1",
            grantId: "g-root",
            runId: "run",
            failed: false,
            labels: [],
            writeTo: [],
            at: 1,
            expiresAt: 2,
          }),
        rewrapKey: (s) => s.rewrapKey("k", "a", "b"),
        createApiKey: (s) => s.createApiKey(makeApiKey("key_late")),
        listApiKeys: (s) => s.listApiKeys(),
        revokeApiKey: (s) => s.revokeApiKey("key_1", 1),
        findApiKeyByHash: (s) => s.findApiKeyByHash("00"),
        hasActiveApiKey: (s) => s.hasActiveApiKey(),
        protectedModeEnded: (s) => s.protectedModeEnded(),
        readMeta: (s) => s.readMeta("store_id"),
        writeMeta: (s) => s.writeMeta("auth_mode", "keys"),
        claimMeta: (s) => s.claimMeta("late", "x"),
        checkIntact: (s) => s.checkIntact(),
        getBudgetUsage: (s) => s.getBudgetUsage("g"),
        createApprovalOnce: (s) => s.createApprovalOnce(makeApproval("apr_late"), 1),
        getApproval: (s) => s.getApproval("apr_1"),
        listApprovals: (s) => s.listApprovals({ limit: 1 }),
        decideApproval: (s) =>
          s.decideApproval({ approvalId: "apr_1", approver: "a", outcome: "approve", at: 1 }),
        expireApprovals: (s) => s.expireApprovals(1),
        supersedeApprovalsOf: (s) =>
          s.supersedeApprovalsOf(["g"], { code: "GRANT_REVOKED", message: "x" }, 1),
        approvalEvents: (s) => s.approvalEvents(undefined, 0, 1),
        lastApprovalSequence: (s) => s.lastApprovalSequence(),
        createEndorsement: (s) => s.createEndorsement(makeEndorsement("end_late")),
        getEndorsement: (s) => s.getEndorsement("end_1"),
        listEndorsements: (s) => s.listEndorsements({ limit: 1 }),
        liveEndorsements: (s) => s.liveEndorsements("g", "a", "owner", 1),
        revokeEndorsement: (s) => s.revokeEndorsement("end_1", "x", 1),
        pruneEndorsements: (s) => s.pruneEndorsements(1),
        approveByEndorsements: (s) =>
          s.approveByEndorsements({
            draft: makeApproval("apr_late"),
            endorsements: [makeEndorsement("end_1")],
            decidedBy: "endorsement:end_1",
            now: 1,
          }),
        createApprovalLink: (s) =>
          s.createApprovalLink({
            tokenHash: "h",
            approvalId: "a",
            approver: "p",
            createdAt: 1,
            expiresAt: 2,
          }),
        getApprovalLink: (s) => s.getApprovalLink("h"),
        redeemApprovalLink: (s) => s.redeemApprovalLink("h", 1),
        approvalRun: (s) => s.approvalRun("a"),
        pruneApprovalLinks: (s) => s.pruneApprovalLinks(1),
        readAudit: (s) => s.readAudit(0, 1),
        auditHead: (s) => s.auditHead(),
        putCheckpoint: (s) => s.putCheckpoint({ seq: 1, hash: "h", at: 1, signature: "s" }),
        listCheckpoints: (s) => s.listCheckpoints(),
        pruneAudit: (s) => s.pruneAudit(1),
        appendAudit: (s) => s.appendAudit({ at: 1, kind: "call.unauthenticated" }),
      };

      it.each(Object.entries(calls))("%s rejects with UNAVAILABLE", async (_method, call) => {
        await store.putGrant(makeGrant("g"));
        await store.insertKey(makeKey("k", 1));
        await store.commitDecision(makeDecision("dec_1"));
        await store.close();
        await expectStoreError(call(store), "UNAVAILABLE");
      });

      it("covers every operation the store has", () => {
        const notOperations = new Set(["close", "traits", "onAuditAppended"]);
        const operations = Object.keys(store).filter((name) => !notOperations.has(name));
        expect(operations.sort()).toEqual(Object.keys(calls).sort());
      });

      it("closing twice is harmless", async () => {
        await store.close();
        await expect(store.close()).resolves.toBeUndefined();
      });
    });
  });
}
