import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../src/app/context.js";
import { catalogCacheSize, catalogFor, issueGrant } from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import type { TaskGrant } from "../../src/core/grant.js";
import { signGrantToken } from "../../src/token/grant-token.js";
import { FIXTURES } from "../support/charter-server.js";

// The rendered-catalog cache is keyed by dialect and grant id, and an entry answers only the
// verified grant it was rendered for: a grant id is inside the token, the token is the authority.

let dataDir: string;
let app: AppContext;
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "charter-catalog-keys-"));
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

async function issue(): Promise<{ token: string; grant: TaskGrant }> {
  const issued = await issueGrant(app, {
    profile: "owner-assistant",
    subject: "agent:a",
    owner: "ana@example.com",
    purpose: "p",
  });
  return { token: issued.token, grant: issued.grant };
}

/** Another token for the same grant id, signed by the same ring, holding one callable action fewer. */
async function narrowerTokenOf(grant: TaskGrant): Promise<{ token: string; dropped: string }> {
  const dropped = grant.allowed.find((id) => !Object.hasOwn(grant.caveats, id));
  if (dropped === undefined) throw new Error("the demo grant must allow an action without caveats");
  const narrower: TaskGrant = { ...grant, allowed: grant.allowed.filter((id) => id !== dropped) };
  return {
    token: await signGrantToken(narrower, app.ring, {
      issuer: app.tokens.issuer,
      audience: app.tokens.audience,
    }),
    dropped,
  };
}

const actionIds = (answer: { view: { tools: readonly { actionId: string }[] } }) =>
  answer.view.tools.map((t) => t.actionId);

describe("catalogFor() cache keys", () => {
  it("never answers a cached catalog for another token of the same grant id", async () => {
    const { token, grant } = await issue();
    const other = await narrowerTokenOf(grant);
    const first = await catalogFor(app, { grantToken: token, dialect: "openai_chat" });
    expect(await catalogFor(app, { grantToken: token, dialect: "openai_chat" })).toBe(first);
    expect(actionIds(first)).toContain(other.dropped);

    const answer = await catalogFor(app, { grantToken: other.token, dialect: "openai_chat" });
    expect(answer).not.toBe(first);
    expect(answer.view.grantId).toBe(grant.id);
    expect(actionIds(answer)).not.toContain(other.dropped);
    expect(answer.toolsJson).not.toBe(first.toolsJson);

    // And the first token gets its own catalog again, not the other's.
    const again = await catalogFor(app, { grantToken: token, dialect: "openai_chat" });
    expect(actionIds(again)).toContain(other.dropped);
    expect(again.toolsJson).toBe(first.toolsJson);
  });

  it("answers a repeated token from the cache without rendering it again", async () => {
    const { token } = await issue();
    const first = await catalogFor(app, { grantToken: token, dialect: "mcp" });
    for (let i = 0; i < 3; i++)
      expect(await catalogFor(app, { grantToken: token, dialect: "mcp" })).toBe(first);
    expect(catalogCacheSize(app).entries).toBe(1);
  });

  it("renders again after a reload, into the new pair's cache", async () => {
    const { token } = await issue();
    const before = await catalogFor(app, { grantToken: token, dialect: "neutral" });
    const old = app.policySet();
    const reloaded = await app.reload();
    expect(reloaded).not.toBe(old);
    const after = await catalogFor(app, { grantToken: token, dialect: "neutral" });
    expect(after).not.toBe(before);
    expect(after.toolsJson).toBe(before.toolsJson);
    expect(catalogCacheSize(app, reloaded).entries).toBe(1);
  });
});
