import { join } from "node:path";
import { expect } from "vitest";
import { openSqliteStore, type Store } from "../../src/store/index.js";
import { makeGrant } from "./fixtures.js";

/**
 * A SQLite store on a fresh file in `dir` holding a root grant and its child, checked once as
 * not revoked (so the check keeps their "not revoked"); `keep` is handed the store to close later.
 */
export async function seededRevocationStore(
  dir: string,
  keep: (store: Store) => void,
): Promise<{ file: string; store: Store; ids: string[] }> {
  const file = join(dir, "charter.db");
  const store = await openSqliteStore({ file });
  keep(store);
  const root = makeGrant("g-root");
  const child = makeGrant("g-child", root);
  await store.putGrant(root);
  await store.putGrant(child);
  const ids = [...child.chain, child.id];
  expect(await store.anyRevoked(ids)).toBe(false);
  return { file, store, ids };
}
