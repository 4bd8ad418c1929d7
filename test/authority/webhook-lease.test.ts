import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createWebhookLease } from "../../src/authority/webhook-lease.js";
import { openSqliteStore, type Store } from "../../src/store/index.js";
import { tempDirs } from "../store/temp-dirs.js";

const dirs = tempDirs("charter-webhook-lease");
afterAll(() => dirs.removeAll());
const open: Store[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

/** Two connections to one store file, as two processes have. */
async function twoProcesses(): Promise<[Store, Store]> {
  const file = join(dirs.make(), "charter.db");
  const a = await openSqliteStore({ file });
  const b = await openSqliteStore({ file });
  open.push(a, b);
  return [a, b];
}

describe("createWebhookLease()", () => {
  it("lets one process of a store deliver; the other takes over once it expires", async () => {
    const [a, b] = await twoProcesses();
    let now = 1_000_000;
    const first = createWebhookLease(a, "process-a", () => now, 10_000);
    const second = createWebhookLease(b, "process-b", () => now, 10_000);
    expect(await first.held()).toBe(true);
    expect(await second.held()).toBe(false);
    now += 6_000; // past half-time: renewed
    expect(await first.held()).toBe(true);
    expect(await second.held()).toBe(false);
    now += 9_000; // within the renewed lease
    expect(await second.held()).toBe(false);
    now += 20_000; // the holder stopped renewing (a crash): it expires
    expect(await second.held()).toBe(true);
    expect(await first.held()).toBe(false);
  });

  it("is taken at once after the holder releases it (a clean stop)", async () => {
    const [a, b] = await twoProcesses();
    const first = createWebhookLease(a, "process-a");
    const second = createWebhookLease(b, "process-b");
    expect(await first.held()).toBe(true);
    expect(await second.held()).toBe(false);
    await first.release();
    expect(await second.held()).toBe(true);
  });
});
