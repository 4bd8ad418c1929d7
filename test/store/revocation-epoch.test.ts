import { execFileSync } from "node:child_process";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore, type Store } from "../../src/store/index.js";
import { expectStoreError } from "./contract-assert.js";
import { ISSUED_AT } from "./fixtures.js";
import { seededRevocationStore } from "./revocation-seed.js";
import { tempDirs } from "./temp-dirs.js";

const dirs = tempDirs("charter-revocation");
const stores: Store[] = [];

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  dirs.removeAll();
});

async function open(file: string): Promise<Store> {
  const store = await openSqliteStore({ file });
  stores.push(store);
  return store;
}

/** The seeded store, checked a second time: the second answer comes from the kept "not revoked". */
async function seeded(): Promise<{ file: string; store: Store; ids: string[] }> {
  const seed = await seededRevocationStore(dirs.make(), (store) => stores.push(store));
  expect(await seed.store.anyRevoked(seed.ids)).toBe(false);
  return seed;
}

describe("anyRevoked() on SQLite", () => {
  it("sees a revocation made through the same store on the next call", async () => {
    const { store, ids } = await seeded();
    await store.revokeGrant("g-child", "done", ISSUED_AT + 5);
    expect(await store.anyRevoked(ids)).toBe(true);
    expect(await store.anyRevoked(["g-root"])).toBe(false);
  });

  it("sees a revocation of an ancestor made through another store on the same file on the next call", async () => {
    const { file, store, ids } = await seeded();
    const other = await open(file);
    await other.revokeGrant("g-root", "compromised", ISSUED_AT + 5);
    expect(await store.anyRevoked(ids)).toBe(true);
    expect(await store.anyRevoked(["g-root"])).toBe(true);
  });

  it("sees a revocation written by another process with plain SQL on the next call", async () => {
    const { file, store, ids } = await seeded();
    const sql = "UPDATE grants SET revoked_at = 1, revoked_reason = 'by hand' WHERE id = 'g-root'";
    const script = `const D = require("better-sqlite3"); const db = new D(process.argv[1]); db.prepare(process.argv[2]).run(); db.close();`;
    execFileSync(process.execPath, ["-e", script, file, sql], { cwd: process.cwd() });
    expect(await store.anyRevoked(ids)).toBe(true);
  });

  it("sees a grant row inserted as revoked by another connection", async () => {
    const { file, store } = await seeded();
    // Unknown ids read as not revoked (and are kept so) until a row for them says otherwise.
    expect(await store.anyRevoked(["g-late"])).toBe(false);
    const raw = new Database(file);
    try {
      raw
        .prepare(
          `INSERT INTO grants (id, root_id, parent_id, subject, owner, profile, issued_at, expires_at, grant_json, revoked_at)
           SELECT 'g-late', root_id, parent_id, subject, owner, profile, issued_at, expires_at, grant_json, 1 FROM grants WHERE id = 'g-root'`,
        )
        .run();
    } finally {
      raw.close();
    }
    expect(await store.anyRevoked(["g-late"])).toBe(true);
  });

  it("fails closed (CORRUPT) when the revocation epoch is gone", async () => {
    const { file, store, ids } = await seeded();
    const raw = new Database(file);
    try {
      raw.prepare("DELETE FROM revocation_epoch").run();
    } finally {
      raw.close();
    }
    await expectStoreError(store.anyRevoked(ids), "CORRUPT");
  });
});
