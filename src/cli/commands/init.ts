import { createAppContext } from "../../app/context.js";
import {
  readStoreIdFile,
  sqliteStoreFile,
  sqliteStorePresent,
  storeIdFile,
} from "../../store/index.js";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";

/**
 * `charter init`: creates a new, empty store (its id, recorded in the store and in the id file
 * beside it, and a first signing key). Refused when a SQLite store is there already; a stale id
 * file (its store gone) is replaced, which is how a data dir whose store was lost starts anew.
 * On PostgreSQL the data dir's id file is written from the database's id.
 */
export async function initCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, CONFIG_FLAGS, true);
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument "${String(positionals[0])}"`);
  const config = await configFrom(values, io.env);
  const file = sqliteStoreFile({
    dataDir: config.dataDir,
    ...(config.database === undefined ? {} : { url: config.database }),
  });
  const idFile = file === undefined ? join(config.dataDir, "charter.db.id") : storeIdFile(file);
  if (file !== undefined && sqliteStorePresent(file)) {
    io.err(
      `charter init: a store is there already: ${file}; to start anew, stop Charter and move it (and its -wal, -shm and .id files) away first`,
    );
    return 1;
  }
  const stale = readStoreIdFile(idFile);
  if (file !== undefined && stale !== undefined) {
    rmSync(idFile);
    io.err(`charter init: store ${stale} is gone; starting anew`);
  } else if (file === undefined) rmSync(idFile, { force: true });
  const ctx = await createAppContext(config, { tokenCacheSize: 1, createStore: true });
  await ctx.close();
  io.err(
    `charter init: created ${file ?? "the PostgreSQL store's id file"} (store ${readStoreIdFile(idFile) ?? "?"})`,
  );
  return 0;
}
