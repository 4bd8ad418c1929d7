import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isSharedStoreUrl, storeUrlScheme } from "./database-url.js";
import { StoreError, type Store } from "./port.js";
import { openPostgresStore } from "./postgres/open.js";
import { openSqliteStore } from "./sqlite/open.js";
import { reconcileStoreId, STORE_ID_META } from "./store-identity.js";

/** Where Charter's store is and how to open it. */
export interface OpenStoreOptions {
  readonly dataDir: string;
  /** a database URL (sqlite:, file:, postgres:); absent = the embedded SQLite file <dataDir>/charter.db */
  readonly url?: string;
  /** Unix seconds, for the migration history. Default: the system clock. */
  readonly now?: () => number;
  /** How long a statement waits for another connection's lock before failing UNAVAILABLE. */
  readonly busyTimeoutMs?: number;
  /** Where the store's warnings go (the embedded store's WAL checkpointer). Default: `process.emitWarning`. */
  readonly warn?: (message: string) => void;
  /** Whether a missing SQLite store may be created (default true; see `src/store/store-identity.ts`). */
  readonly create?: boolean;
}

/**
 * Opens the store a deployment names. No url: the embedded SQLite file `<dataDir>/charter.db`.
 * `sqlite:<path>` or `file:<path>` (a relative path is relative to the working directory, as
 * SQLite's own are; `sqlite:///abs/path` and `file:///abs/path` URLs work too): that SQLite file.
 * `postgres://` or `postgresql://`: that PostgreSQL database (`?schema=name` picks the schema).
 * Any other scheme fails with a StoreError UNAVAILABLE naming the scheme, never the rest of the
 * URL (it may hold a password).
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const file = sqliteStoreFile(options);
  if (file === undefined) {
    const store = await openPostgresStore({
      url: options.url ?? "",
      ...(options.now === undefined ? {} : { now: options.now }),
    });
    // The store id lives in the database; the data dir's id file says which database it served.
    try {
      await reconcileStoreId(
        {
          read: () => store.readMeta(STORE_ID_META),
          claim: (id) => store.claimMeta(STORE_ID_META, id),
        },
        join(options.dataDir, "charter.db.id"),
        "the PostgreSQL store",
      );
    } catch (err) {
      await store.close();
      throw err;
    }
    return store;
  }
  return openSqliteStore({
    file,
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
    ...(options.warn === undefined ? {} : { warn: options.warn }),
    ...(options.create === undefined ? {} : { create: options.create }),
  });
}

/** The SQLite file the options name (see `openStore`), or undefined for a PostgreSQL database; a URL this build cannot open throws. */
export function sqliteStoreFile(
  options: Pick<OpenStoreOptions, "dataDir" | "url">,
): string | undefined {
  if (options.url === undefined) return join(options.dataDir, "charter.db");
  return isSharedStoreUrl(options.url) ? undefined : sqliteFileOf(options.url);
}

/** The SQLite file a store URL names; any URL this build cannot open is refused. */
function sqliteFileOf(url: string): string {
  const scheme = storeUrlScheme(url);
  if (scheme === undefined)
    throw unsupported(
      `the store url is not a URL (expected postgres://…, sqlite:<path> or file:<path>)`,
    );
  if (scheme !== "sqlite" && scheme !== "file") {
    throw unsupported(
      `the store url scheme "${scheme}:" is not supported; use postgres://…, sqlite:<path>, file:<path> or no url`,
    );
  }
  const rest = url.slice(scheme.length + 1);
  if (/[?#]/.test(rest))
    throw unsupported(`the store url "${scheme}:…" may not have a query or fragment`);
  const file = rest.startsWith("//") ? fromFileUrl(`file:${rest}`, scheme) : rest;
  if (file === "") throw unsupported(`the store url "${scheme}:" names no file`);
  return file;
}

/** The path of a `//host/path` URL; only an empty host or localhost, and no query or fragment. */
function fromFileUrl(url: string, scheme: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw unsupported(`the store url "${scheme}://…" is not a valid URL`);
  }
  if (parsed.hostname !== "" && parsed.hostname !== "localhost")
    throw unsupported(`the store url "${scheme}://…" names a host; SQLite files are local`);
  return fileURLToPath(parsed);
}

function unsupported(message: string): StoreError {
  return new StoreError("UNAVAILABLE", message);
}
