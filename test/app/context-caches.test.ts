import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../src/app/context.js";
import {
  authorize,
  cacheStats,
  catalogCacheSize,
  catalogFor,
  createAuthorityCaches,
  delegateGrant,
  issueGrant,
  type AuthorityContext,
} from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import { createMetrics } from "../../src/telemetry/metrics.js";
import { FIXTURES } from "../support/charter-server.js";

// Caches belong to the application context: two contexts in one process (the tests make many)
// share none, and closing a context empties its own.

const dirs: string[] = [];
const open: AppContext[] = [];

async function context(): Promise<AppContext> {
  const dataDir = mkdtempSync(join(tmpdir(), "charter-context-caches-"));
  dirs.push(dataDir);
  const app = await createAppContext({
    ...DEFAULTS,
    dataDir,
    catalog: join(FIXTURES, "catalog.yaml"),
    policy: join(FIXTURES, "policy.yaml"),
  });
  open.push(app);
  return app;
}

async function tokenFor(ctx: AuthorityContext): Promise<string> {
  const issued = await issueGrant(ctx, {
    profile: "owner-assistant",
    subject: "agent:a",
    owner: "ana@example.com",
    purpose: "p",
    requestedActions: [],
  });
  return issued.token;
}

let a: AppContext;
let b: AppContext;
beforeEach(async () => {
  a = await context();
  b = await context();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((app) => app.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("an application context's caches", () => {
  it("are its own: what one context renders is not in another's cache", async () => {
    expect(a.caches).not.toBe(b.caches);
    await catalogFor(a, { grantToken: await tokenFor(a), dialect: "mcp" });
    expect(catalogCacheSize(a).entries).toBe(1);
    expect(catalogCacheSize(b).entries).toBe(0);
  });

  it("never serve a catalog rendered under another context, even for the same pair and grant", async () => {
    const token = await tokenFor(a);
    const first = await catalogFor(a, { grantToken: token, dialect: "neutral" });
    expect(await catalogFor(a, { grantToken: token, dialect: "neutral" })).toBe(first);
    // The same pair, store and verifier (so the very same verified grant object), other caches.
    const other: AuthorityContext = { ...a, caches: createAuthorityCaches() };
    const rendered = await catalogFor(other, { grantToken: token, dialect: "neutral" });
    expect(rendered).not.toBe(first);
    expect(rendered.toolsJson).toBe(first.toolsJson);
    expect(catalogCacheSize(other).entries).toBe(1);
  });

  it("are emptied when the context is closed", async () => {
    const parentToken = await tokenFor(a);
    await catalogFor(a, { grantToken: parentToken, dialect: "mcp" });
    const child = await delegateGrant(a, {
      parentToken,
      spec: { subject: "agent:child", allowed: ["web.search"], limits: { maxCalls: 2 } },
    });
    const call = {
      callId: "c1",
      toolName: "web_search",
      actionId: "",
      argumentsJson: JSON.stringify({ query: "charter" }),
    };
    expect((await authorize(a, { grantToken: child.token, call })).verdict.decision).toBe("allow");
    expect(catalogCacheSize(a).entries).toBe(1);
    expect(a.caches.ancestors(a.store).size).toBe(1);
    await a.close();
    expect(catalogCacheSize(a).entries).toBe(0);
    expect(a.caches.ancestors(a.store).size).toBe(0);
  });

  it("remember a grant whose allow a commit refused in that context only, until it is closed", async () => {
    const child = await delegateGrant(a, {
      parentToken: await tokenFor(a),
      spec: { subject: "agent:child", allowed: ["web.search"], limits: { maxCalls: 1 } },
    });
    const call = (callId: string) => ({
      callId,
      toolName: "web_search",
      actionId: "",
      argumentsJson: JSON.stringify({ query: "charter" }),
    });
    const verdicts = [];
    for (const id of ["c1", "c2"])
      verdicts.push((await authorize(a, { grantToken: child.token, call: call(id) })).verdict);
    expect(verdicts.map((v) => v.reason?.code)).toEqual([undefined, "LIMIT_EXCEEDED"]);
    const verified = await a.verifier.verify(child.token, a.now());
    if (!verified.ok) throw new Error(verified.message);
    expect(a.caches.refusedGrants.has(verified.grant)).toBe(true);
    expect(b.caches.refusedGrants.has(verified.grant)).toBe(false);
    await a.close();
    expect(a.caches.refusedGrants.has(verified.grant)).toBe(false);
  });

  it("are what each context's metrics report, not another's", async () => {
    await catalogFor(a, { grantToken: await tokenFor(a), dialect: "mcp" });
    const entries = async (ctx: AppContext) => {
      const metrics = createMetrics({ caches: () => cacheStats(ctx) });
      const gauge = await metrics.registry.getSingleMetric("charter_cache_entries")?.get();
      return Object.fromEntries(
        (gauge?.values ?? []).map((v) => [String(v.labels["cache"]), v.value]),
      );
    };
    expect(await entries(a)).toMatchObject({ catalog: 1, token: 1, ancestors: 0 });
    expect(await entries(b)).toMatchObject({ catalog: 0, token: 0, ancestors: 0 });
  });
});
