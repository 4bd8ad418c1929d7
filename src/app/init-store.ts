import { rmSync } from "node:fs";
import { join } from "node:path";
import type { CharterConfig } from "../config/config.js";
import {
  readStoreIdFile,
  sqliteStoreFile,
  sqliteStorePresent,
  storeIdFile,
} from "../store/index.js";
import { createAppContext } from "./context.js";

/** What `charter init` did, or why it did nothing. */
export type InitOutcome =
  | {
      readonly created: true;
      readonly store: string;
      readonly id: string;
      readonly replaced?: string;
    }
  | { readonly created: false; readonly reason: string };

/**
 * Creates a new, empty store (its id, recorded in the store and in the id file beside it, and a
 * first signing key). Does nothing when a SQLite store is there already; a stale id file (its
 * store gone) is replaced, which is how a data dir whose store was lost starts anew. On
 * PostgreSQL the data dir's id file is written again from the database's id.
 */
export async function initStore(config: CharterConfig): Promise<InitOutcome> {
  const file = sqliteStoreFile({
    dataDir: config.dataDir,
    ...(config.database === undefined ? {} : { url: config.database }),
  });
  const idFile = file === undefined ? join(config.dataDir, "charter.db.id") : storeIdFile(file);
  if (file !== undefined && sqliteStorePresent(file))
    return {
      created: false,
      reason: `a store is there already: ${file}; to start anew, stop Charter and move it (and its -wal, -shm and .id files) away first`,
    };
  const stale = readStoreIdFile(idFile);
  rmSync(idFile, { force: true });
  const ctx = await createAppContext(config, { tokenCacheSize: 1, createStore: true });
  await ctx.close();
  return {
    created: true,
    store: file ?? "the PostgreSQL store",
    id: readStoreIdFile(idFile) ?? "",
    ...(stale === undefined ? {} : { replaced: stale }),
  };
}
