import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/index.js";
import { expectStoreError } from "./contract.js";
import { makeGrant } from "./fixtures.js";
import { tempDirs } from "./temp-dirs.js";

const dirs = tempDirs("charter-open-store");
const stores: Store[] = [];

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  dirs.removeAll();
});

async function open(options: Parameters<typeof openStore>[0]): Promise<Store> {
  const store = await openStore(options);
  stores.push(store);
  return store;
}

/** The store works, and what it wrote is in `file`. */
async function expectStoreIn(store: Store, file: string): Promise<void> {
  await store.putGrant(makeGrant("g"));
  expect(await store.getGrant("g")).toStrictEqual({ grant: makeGrant("g") });
  const db = new Database(file, { readonly: true });
  try {
    expect(db.prepare("SELECT id FROM grants").pluck().all()).toEqual(["g"]);
  } finally {
    db.close();
  }
}

describe("openStore()", () => {
  it("opens the embedded SQLite file <dataDir>/charter.db when no url is given, creating the directory", async () => {
    const dataDir = join(dirs.make(), "data");
    await expectStoreIn(await open({ dataDir }), join(dataDir, "charter.db"));
  });

  it.each([
    ["sqlite:<path>", (file: string) => `sqlite:${file}`],
    ["file:<path>", (file: string) => `file:${file}`],
    ["a file:// URL", (file: string) => pathToFileURL(file).href],
    ["a sqlite:// URL", (file: string) => pathToFileURL(file).href.replace(/^file:/, "sqlite:")],
    [
      "a file://localhost URL",
      (file: string) => pathToFileURL(file).href.replace(/^file:\/\//, "file://localhost"),
    ],
  ])("opens the SQLite file a url names: %s", async (_form, urlOf) => {
    const dataDir = dirs.make();
    const file = join(dirs.make(), "elsewhere", "my store.db");
    await expectStoreIn(await open({ dataDir, url: urlOf(file) }), file);
    expect(existsSync(join(dataDir, "charter.db"))).toBe(false);
  });

  it("opens an in-memory SQLite store for sqlite::memory:", async () => {
    const store = await open({ dataDir: dirs.make(), url: "sqlite::memory:" });
    await store.putGrant(makeGrant("g"));
    expect(await store.getGrant("g")).toBeDefined();
  });

  it("passes the clock on to the migration history", async () => {
    const dataDir = dirs.make();
    await (await open({ dataDir, now: () => 111, busyTimeoutMs: 100 })).close();
    const db = new Database(join(dataDir, "charter.db"), { readonly: true });
    try {
      expect(db.prepare("SELECT DISTINCT applied_at FROM schema_migrations").pluck().all()).toEqual(
        [111],
      );
    } finally {
      db.close();
    }
  });

  it.each([
    ["mysql://root:s3cr3t-pw@db/charter", /scheme "mysql:" is not supported/],
    ["https://s3cr3t-pw@example.com/db", /scheme "https:" is not supported/],
    ["/var/lib/charter/charter.db", /not a URL/],
    ["sqlite:", /names no file/],
    ["sqlite://db.internal/charter.db", /names a host/],
    ["file:charter.db?mode=ro", /may not have a query/],
    ["sqlite:///tmp/charter.db#s3cr3t-pw", /may not have a query or fragment/],
  ])("refuses %s with a clear error", async (url, message) => {
    const err = await expectStoreError(openStore({ dataDir: dirs.make(), url }), "UNAVAILABLE");
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain("s3cr3t-pw");
  });
});
