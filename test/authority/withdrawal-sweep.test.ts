import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../src/app/context.js";
import {
  createWithdrawalSweeper,
  mayWithdraw,
  type AuthorityContext,
} from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import type { Policy } from "../../src/core/policy.js";
import type { Store } from "../../src/store/port.js";
import { FIXTURES } from "../support/charter-server.js";

// The reload sweep of the sticky kill switch fails closed: a sweep that failed is run again before
// the next reload, and that reload is refused while it still fails. A real SQLite context; only
// the store's listing is made to fail.

let app: AppContext | undefined;
let dir = "";
afterEach(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function context(): Promise<AppContext> {
  dir = mkdtempSync(join(tmpdir(), "charter-sweep-"));
  app = await createAppContext({
    ...DEFAULTS,
    dataDir: dir,
    catalog: join(FIXTURES, "catalog.yaml"),
    policy: join(FIXTURES, "policy.yaml"),
  });
  return app;
}

describe("createWithdrawalSweeper()", () => {
  it("runs a failed sweep again before the next reload, and refuses the reload while it fails", async () => {
    const real = await context();
    await real.withdrawalsSwept();
    let failing = true;
    const store = new Proxy(real.store, {
      get: (target, key: keyof Store) =>
        key === "listLiveGrants" && failing
          ? () => Promise.reject(new Error("disk gone"))
          : (Reflect.get(target, key) as unknown),
    });
    const ctx: AuthorityContext = { ...real, store };
    const warnings: string[] = [];
    const sweeper = createWithdrawalSweeper(ctx, { warn: (m) => warnings.push(m) });
    // The fixture policy suspends legacy-crm-sync: a start with it sweeps.
    sweeper.start(undefined, real.policySet().policy);
    await sweeper.idle();
    expect(warnings.join("\n")).toMatch(
      /withdrawal sweep for policy demo-policy-1 failed \(disk gone\)/,
    );
    await expect(sweeper.settle()).rejects.toThrow("disk gone");
    failing = false;
    await expect(sweeper.settle()).resolves.toBeUndefined();
    await expect(sweeper.settle()).resolves.toBeUndefined();
  });

  it("sweeps only when a reload suspends or removes a source that applied", () => {
    const policy = (sources: Record<string, "active" | "suspended">): Policy =>
      ({
        version: "v",
        sources: new Map(Object.entries(sources).map(([id, status]) => [id, { id, status }])),
      }) as unknown as Policy;
    expect(mayWithdraw(policy({ a: "active" }), policy({ a: "active", b: "active" }))).toBe(false);
    expect(mayWithdraw(policy({ a: "active" }), policy({ a: "suspended" }))).toBe(true);
    expect(mayWithdraw(policy({ a: "active" }), policy({}))).toBe(true);
    expect(mayWithdraw(policy({ a: "suspended" }), policy({}))).toBe(false);
    expect(mayWithdraw(undefined, policy({ a: "active" }))).toBe(false);
    expect(mayWithdraw(undefined, policy({ a: "suspended" }))).toBe(true);
  });
});
