import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../src/app/context.js";
import {
  authorize,
  authorizeBatch,
  delegateGrant,
  issueGrant,
  revokeGrant,
  type AuthorityContext,
  type CallRequest,
} from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import type { DecisionRecord, Store } from "../../src/store/port.js";
import type { KeyRing } from "../../src/token/index.js";
import { FIXTURES } from "../support/charter-server.js";

let dataDir: string;
let app: AppContext;
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "charter-authority-"));
  app = await createAppContext({
    ...DEFAULTS,
    dataDir,
    catalog: join(FIXTURES, "catalog.yaml"),
    policy: join(FIXTURES, "policy.yaml"),
  });
});
afterEach(async () => {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const search = (callId: string, query = "charter"): CallRequest => ({
  callId,
  toolName: "web_search",
  actionId: "",
  argumentsJson: JSON.stringify({ query }),
});

async function tokenFor(ctx: AuthorityContext): Promise<string> {
  return (
    await issueGrant(ctx, {
      profile: "owner-assistant",
      subject: "agent:a",
      owner: "ana@example.com",
      purpose: "p",
      requestedActions: [],
    })
  ).token;
}

/** The real store, with every committed record also kept in `committed` and a hook after each commit. */
function watched(store: Store, afterCommit: (record: DecisionRecord) => void = () => undefined) {
  const committed: DecisionRecord[] = [];
  const spy: Store = Object.create(store) as Store;
  spy.commitDecision = async (record, effects) => {
    const outcome = await store.commitDecision(record, effects);
    committed.push(record);
    afterCommit(record);
    return outcome;
  };
  return { store: spy, committed };
}

/** A ring that counts the receipts it signs, and those it signs once `gone` has aborted. */
function countingRing(gone?: AbortSignal): {
  ring: KeyRing;
  signatures: () => number;
  afterGone: () => number;
} {
  const signed = app.ring.signingKey();
  let signatures = 0;
  let afterGone = 0;
  const ring: KeyRing = Object.create(app.ring) as KeyRing;
  ring.signingKey = () => {
    signatures += 1;
    if (gone?.aborted === true) afterGone += 1;
    return signed;
  };
  return { ring, signatures: () => signatures, afterGone: () => afterGone };
}

describe("authorize()", () => {
  it("records the decision before it answers, with digests and codes but no argument value", async () => {
    const token = await tokenFor(app);
    const decided = await authorize(app, { grantToken: token, call: search("c1", "needle-value") });
    expect(decided.verdict.decision).toBe("allow");
    expect(decided.receipt?.split(".")).toHaveLength(3);
    const record = await app.store.getDecision(decided.decisionId);
    expect(record).toMatchObject({
      decisionId: decided.decisionId,
      decision: "allow",
      actionId: "web.search",
      toolName: "web_search",
      callId: "c1",
      callDigest: decided.verdict.callDigest,
      catalogVersion: "demo-1",
      policyVersion: "demo-policy-1",
    });
    expect(JSON.stringify(record)).not.toContain("needle-value");
  });

  it.each([true, false])(
    "signs an allow's receipt while its commit is made durable (commits in queue order: %s)",
    async (commitsInQueueOrder) => {
      const token = await tokenFor(app);
      const { ring, signatures } = countingRing();
      const signedByCommit: number[] = [];
      const spy: Store = Object.create(app.store) as Store;
      spy.commitDecision = async (record, effects) => {
        const outcome = await app.store.commitDecision(record, effects);
        signedByCommit.push(signatures());
        return outcome;
      };
      const decided = await authorize(
        { ...app, store: ordered(spy, commitsInQueueOrder), ring },
        { grantToken: token, call: search("c1") },
      );
      expect(decided.verdict.decision).toBe("allow");
      expect(signedByCommit).toEqual([1]);
      expect(signatures()).toBe(1);
      const claims = JSON.parse(
        Buffer.from(decided.receipt?.split(".")[1] ?? "", "base64url").toString(),
      ) as Record<string, unknown>;
      expect(claims).toMatchObject({
        jti: decided.decisionId,
        call_id: "c1",
        args_digest: decided.verdict.callDigest,
      });
    },
  );

  it("signs nothing ahead for a caller gone by the time its commit is asked; the call is recorded and answers no receipt", async () => {
    const token = await tokenFor(app);
    const caller = new AbortController();
    const { ring, signatures } = countingRing();
    const spy: Store = Object.create(app.store) as Store;
    spy.commitDecision = (record, effects) => {
      caller.abort(new Error("the client went away"));
      return app.store.commitDecision(record, effects);
    };
    await expect(
      authorize(
        { ...app, store: spy, ring },
        { grantToken: token, call: search("c1") },
        { signal: caller.signal },
      ),
    ).rejects.toThrow("the client went away");
    expect(signatures()).toBe(0);
    expect(
      (await app.store.readAudit(0, 100)).some((row) => row.entry.includes('"callId":"c1",')),
    ).toBe(true);
  });

  it("drops the receipt of an allow its commit refused, and signs nothing ahead for that grant afterwards", async () => {
    const parentToken = await tokenFor(app);
    const child = await delegateGrant(app, {
      parentToken,
      spec: { subject: "agent:child", allowed: ["web.search"], limits: { maxCalls: 2 } },
    });
    const { ring, signatures } = countingRing();
    const ctx = { ...app, ring };
    const verdicts = [];
    for (const id of ["a", "b", "c", "d"])
      verdicts.push(await authorize(ctx, { grantToken: child.token, call: search(id) }));
    expect(
      verdicts.map((d) => [d.verdict.decision, d.verdict.reason?.code, d.receipt !== undefined]),
    ).toEqual([
      ["allow", undefined, true],
      ["allow", undefined, true],
      ["deny", "LIMIT_EXCEEDED", false],
      ["deny", "LIMIT_EXCEEDED", false],
    ]);
    // "c" was signed ahead and refused by its commit; "d", of a grant refused before, was not signed.
    expect(signatures()).toBe(3);
  });

  it("records a deny with its reason code, the token unverified", async () => {
    const decided = await authorize(app, { grantToken: "a.b.c", call: search("c1") });
    expect(decided.verdict.reason?.code).toBe("GRANT_INVALID");
    expect(await app.store.getDecision(decided.decisionId)).toMatchObject({
      decision: "deny",
      reasonCode: "GRANT_INVALID",
      grantId: "",
    });
  });

  it.each([
    [{ callId: "" }, "call.call_id: is required"],
    [{ toolName: "", actionId: "" }, "call.tool_name: tool_name or action_id is required"],
  ])("refuses a call missing %j before anything is decided", async (missing, message) => {
    const { store, committed } = watched(app.store);
    await expect(
      authorize({ ...app, store }, { grantToken: "t", call: { ...search("c1"), ...missing } }),
    ).rejects.toMatchObject({
      name: "AuthorityError",
      code: "INVALID_REQUEST",
      message,
    });
    expect(committed).toEqual([]);
  });
});

describe("authorizeBatch()", () => {
  it("decides every call against the catalog/policy pair in force when the batch began", async () => {
    const token = await tokenFor(app);
    const first = app.policySet();
    const reloaded = {
      catalog: first.catalog,
      policy: { ...first.policy, version: "reloaded-mid-batch" },
    };
    let reads = 0;
    // A reload that lands after the batch's first read must not reach the rest of the batch.
    const ctx: AuthorityContext = { ...app, policySet: () => (reads++ === 0 ? first : reloaded) };
    const { store, committed } = watched(app.store);
    const decided = await authorizeBatch(
      { ...ctx, store },
      { grantToken: token, calls: [search("a"), search("b"), search("c")] },
    );
    expect(decided.map((d) => d.verdict.callId)).toEqual(["a", "b", "c"]);
    expect(committed.map((r) => r.policyVersion)).toEqual([
      "demo-policy-1",
      "demo-policy-1",
      "demo-policy-1",
    ]);
  });

  it("stops deciding, recording and signing once the caller has gone (a store that needs each commit before the next)", async () => {
    const token = await tokenFor(app);
    const caller = new AbortController();
    const { store, committed } = watched(app.store, () =>
      caller.abort(new Error("the client went away")),
    );
    const { ring, signatures, afterGone } = countingRing(caller.signal);
    const ctx = { ...app, store: ordered(store, false), ring };
    await expect(
      authorizeBatch(
        ctx,
        { grantToken: token, calls: [search("a"), search("b"), search("c")] },
        { signal: caller.signal },
      ),
    ).rejects.toThrow("the client went away");
    expect(committed.map((r) => r.callId)).toEqual(["a"]);
    // "a" was signed while its commit was made durable, and its receipt dropped: nothing after the caller went.
    expect(signatures()).toBe(1);
    expect(afterGone()).toBe(0);
  });

  it("queues the commits of a batch together (one group transaction), in call order; a caller gone meanwhile gets no receipt", async () => {
    expect(app.store.traits.commitsInQueueOrder).toBe(true);
    const token = await tokenFor(app);
    const caller = new AbortController();
    const asked: string[] = [];
    const askedWhenFirstLanded: string[] = [];
    const { store, committed } = watched(app.store, () => {
      if (askedWhenFirstLanded.length === 0) askedWhenFirstLanded.push(...asked);
      caller.abort(new Error("the client went away"));
    });
    const spy: Store = Object.create(store) as Store;
    spy.commitDecision = (record, effects) => {
      asked.push(record.callId);
      return store.commitDecision(record, effects);
    };
    const { ring, signatures, afterGone } = countingRing(caller.signal);
    // 20 calls: a first slice of 16 asked together, then the event loop's turn, then the rest.
    const calls = Array.from({ length: 20 }, (_, i) => search(`c${i}`));
    await expect(
      authorizeBatch(
        { ...app, store: spy, ring },
        { grantToken: token, calls },
        { signal: caller.signal },
      ),
    ).rejects.toThrow("the client went away");
    expect(askedWhenFirstLanded.slice(0, 16)).toEqual(calls.slice(0, 16).map((c) => c.callId));
    // Recorded in call order; what was queued before the caller went is durable. The receipts
    // signed while those commits were made durable are dropped; nothing is signed after it went.
    expect(committed.map((r) => r.callId)).toEqual(asked);
    expect(signatures()).toBeGreaterThanOrEqual(16);
    expect(afterGone()).toBe(0);
  });

  it("reads and parses an ancestor's stored grant once, and still asks for revocation on every call", async () => {
    const parentToken = await tokenFor(app);
    const child = await delegateGrant(app, {
      parentToken,
      spec: { subject: "agent:child", allowed: ["web.search"] },
    });
    const reads: string[] = [];
    const spy: Store = Object.create(app.store) as Store;
    spy.getGrant = (id) => {
      reads.push(id);
      return app.store.getGrant(id);
    };
    const ctx = { ...app, store: spy };
    for (const id of ["a", "b", "c"])
      expect(
        (await authorize(ctx, { grantToken: child.token, call: search(id) })).verdict.decision,
      ).toBe("allow");
    expect(reads).toHaveLength(1);
    await revokeGrant(app, { grantId: reads[0] ?? "", reason: "stop" });
    expect(
      (await authorize(ctx, { grantToken: child.token, call: search("d") })).verdict.reason?.code,
    ).toBe("GRANT_REVOKED");
  });

  it.each([
    [0, "items: at least one call is required"],
    [17, "items: at most 16 calls per batch"],
  ])("refuses a batch of %i calls", async (n, message) => {
    const calls = Array.from({ length: n }, (_, i) => search(`c${i}`));
    await expect(
      authorizeBatch({ ...app, maxBatch: 16 }, { grantToken: "t", calls }),
    ).rejects.toMatchObject({ code: "INVALID_REQUEST", message });
  });
});

/** The store as one that says it commits in queue order, or not. */
function ordered(store: Store, commitsInQueueOrder: boolean): Store {
  const view = Object.create(store) as Store;
  Object.defineProperty(view, "traits", { value: { commitsInQueueOrder } });
  return view;
}
