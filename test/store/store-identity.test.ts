import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { reconcileStoreId } from "../../src/store/store-identity.js";

const dir = mkdtempSync(join(tmpdir(), "charter-store-id-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("reconcileStoreId", () => {
  it("gives openers of a new store at once one id: each data dir names the id the store kept", async () => {
    // A store's meta as both adapters keep it: a claim inserts unless a value is there. Both
    // openers read before either claims: the interleaving two replicas starting together can get.
    const meta = new Map<string, string>();
    let reads = 0;
    let bothRead: () => void = () => {};
    const read = new Promise<void>((resolve) => (bothRead = resolve));
    const store = {
      read: async () => {
        const value = meta.get("store_id");
        if (++reads === 2) bothRead();
        await read;
        return value;
      },
      claim: async (id: string) => {
        if (!meta.has("store_id")) meta.set("store_id", id);
        return meta.get("store_id") as string;
      },
    };
    const files = [join(dir, "a.id"), join(dir, "b.id")];
    const ids = await Promise.all(files.map((f) => reconcileStoreId(store, f, "the store")));
    expect(ids[0]).toBe(ids[1]);
    expect(ids[0]).toBe(meta.get("store_id"));
    for (const f of files) expect(readFileSync(f, "utf8").trim()).toBe(ids[0]);
  });
});
