import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { delegateGrant, revokeGrant, type AuthorityContext } from "../../src/authority/index.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// Revocation is enforced on every call, for the grant and every ancestor, whatever the verifier
// cache holds: the store is asked each time. Each case revokes through one of two doors — the
// store port itself and the application layer — and checks Authorize and GetCatalog.

const UNAUTHENTICATED = 16;

let charter: TestCharter;
let ctx: AuthorityContext;
beforeAll(async () => {
  charter = await startTestCharter();
  ctx = charter.server.context;
});
afterAll(async () => {
  await charter.stop();
});

/** A root grant, its child and its grandchild, each holding web.search. */
async function chain(label: string) {
  const root = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: `agent:${label}`,
    owner: "ana@example.com",
    purpose: label,
  });
  const spec = (subject: string) => ({ subject, allowed: ["web.search", "email.read"] });
  const child = await delegateGrant(ctx, {
    parentToken: root.grantToken,
    spec: spec(`agent:${label}-child`),
  });
  const grandchild = await delegateGrant(ctx, {
    parentToken: child.token,
    spec: spec(`agent:${label}-grandchild`),
  });
  return {
    root: { id: root.grant?.id ?? "", token: root.grantToken },
    child: { id: child.grant.id, token: child.token },
    grandchild: { id: grandchild.grant.id, token: grandchild.token },
  };
}

const search = (grantToken: string) => ({
  grantToken,
  call: { callId: "c1", toolName: "web_search", argumentsJson: '{"query":"charter"}' },
});

async function verdictOf(token: string) {
  const { verdict } = await charter.clients.authority.authorize(search(token));
  return { decision: verdict?.decision, code: verdict?.reason?.code ?? "" };
}

async function catalogFailure(
  token: string,
): Promise<{ code: number; details: string } | "answered"> {
  return charter.clients.catalog.getCatalog({ grantToken: token }).then(
    () => "answered" as const,
    (err: unknown) => {
      const { code, details } = err as { code: number; details: string };
      return { code, details };
    },
  );
}

const REVOKED = { decision: Decision.DENY, code: "GRANT_REVOKED" };
const ALLOWED = { decision: Decision.ALLOW, code: "" };

const doors = [
  [
    "through the store",
    (id: string) => ctx.store.revokeGrant(id, "test", ctx.now()).then(() => undefined),
  ],
  [
    "through the application layer",
    (id: string) => revokeGrant(ctx, { grantId: id, reason: "test" }).then(() => undefined),
  ],
  [
    "through the RevokeGrant RPC",
    (id: string) =>
      charter.clients.grants.revokeGrant({ grantId: id, reason: "test" }).then(() => undefined),
  ],
] as const;

describe.each(doors)("revocation %s", (door, revoke) => {
  it("stops the revoked grant at once, though the verifier cache holds its token", async () => {
    const { root } = await chain(`self-${door}`);
    expect(await verdictOf(root.token)).toEqual(ALLOWED);
    const before = ctx.verifier.stats();
    expect(await verdictOf(root.token)).toEqual(ALLOWED);
    expect(ctx.verifier.stats().cacheHits).toBe(before.cacheHits + 1); // the token is answered from the cache

    await revoke(root.id);
    expect(await verdictOf(root.token)).toEqual(REVOKED);
    expect(await catalogFailure(root.token)).toEqual({
      code: UNAUTHENTICATED,
      details: expect.stringMatching(/^GRANT_REVOKED: /) as unknown,
    });
  });

  it("stops every descendant when an ancestor is revoked", async () => {
    const { root, child, grandchild } = await chain(`ancestor-${door}`);
    for (const g of [root, child, grandchild]) expect(await verdictOf(g.token)).toEqual(ALLOWED);

    await revoke(root.id);
    for (const g of [root, child, grandchild]) {
      expect(await verdictOf(g.token)).toEqual(REVOKED);
      expect(await catalogFailure(g.token)).toMatchObject({ code: UNAUTHENTICATED });
    }
  });

  it("leaves the ancestors of a revoked grant alone", async () => {
    const { root, child, grandchild } = await chain(`middle-${door}`);
    await revoke(child.id);
    expect(await verdictOf(root.token)).toEqual(ALLOWED);
    expect(await verdictOf(child.token)).toEqual(REVOKED);
    expect(await verdictOf(grandchild.token)).toEqual(REVOKED);
  });
});

describe("revocation of a grant only its descendants' tokens name", () => {
  it("is honoured for the parent of a child even when the child's own row is untouched", async () => {
    const { root, child } = await chain("chain-only");
    // Revoke the child's parent row alone: the child's row is left as it was, so only the check
    // of the token's chain (not the grant's own id) can refuse the child.
    const db = (await import("better-sqlite3")).default(`${charter.dataDir}/charter.db`);
    try {
      db.prepare("UPDATE grants SET revoked_at = ?, revoked_reason = 'test' WHERE id = ?").run(
        ctx.now(),
        root.id,
      );
    } finally {
      db.close();
    }
    expect((await ctx.store.getGrant(child.id))?.revokedAt).toBeUndefined();
    expect(await verdictOf(child.token)).toEqual(REVOKED);
  });
});
