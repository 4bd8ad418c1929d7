import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../src/app/context.js";
import {
  CATALOG_CACHE_BOUNDS,
  catalogCacheSize,
  catalogFor,
  issueGrant,
  revokeGrant,
} from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import { FIXTURES } from "../support/charter-server.js";

let dataDir: string;
let app: AppContext;
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "charter-catalog-cache-"));
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

async function issue(subject = "agent:a"): Promise<{ token: string; grantId: string }> {
  const issued = await issueGrant(app, {
    profile: "owner-assistant",
    subject,
    owner: "ana@example.com",
    purpose: "p",
    requestedActions: [],
  });
  return { token: issued.token, grantId: issued.grant.id };
}

describe("catalogFor() cache", () => {
  it("answers a repeated request from the cache, per dialect", async () => {
    const { token } = await issue();
    const first = await catalogFor(app, { grantToken: token, dialect: "openai_chat" });
    expect(await catalogFor(app, { grantToken: token, dialect: "openai_chat" })).toBe(first);
    const mcp = await catalogFor(app, { grantToken: token, dialect: "mcp" });
    expect(mcp).not.toBe(first);
    expect(mcp.toolsJson).toBe(JSON.stringify(mcp.tools));
    expect(catalogCacheSize(app).entries).toBe(2);
  });

  it("still refuses a revoked grant whose catalog it holds", async () => {
    const { token, grantId } = await issue();
    await catalogFor(app, { grantToken: token, dialect: "neutral" });
    await catalogFor(app, { grantToken: token, dialect: "neutral" });
    await revokeGrant(app, { grantId, reason: "test" });
    await expect(catalogFor(app, { grantToken: token, dialect: "neutral" })).rejects.toMatchObject({
      code: "UNAUTHENTICATED",
      reason: "GRANT_REVOKED",
    });
  });

  it("stays within its bounds: the least recently used entries go", async () => {
    const first = await issue("agent:0");
    const answer = await catalogFor(app, { grantToken: first.token, dialect: "neutral" });
    const others = await Promise.all(
      Array.from({ length: CATALOG_CACHE_BOUNDS.maxEntries }, (_, i) => issue(`agent:${i + 1}`)),
    );
    for (const { token } of others)
      await catalogFor(app, { grantToken: token, dialect: "neutral" });
    const size = catalogCacheSize(app);
    expect(size.entries).toBeGreaterThan(0);
    expect(size.entries).toBeLessThanOrEqual(CATALOG_CACHE_BOUNDS.maxEntries);
    expect(size.bytes).toBeLessThanOrEqual(CATALOG_CACHE_BOUNDS.maxBytes);
    const again = await catalogFor(app, { grantToken: first.token, dialect: "neutral" });
    expect(again).not.toBe(answer); // evicted, rendered again
    expect(again).toEqual(answer);
  });
});
