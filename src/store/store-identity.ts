import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { StoreError } from "./port.js";

/**
 * Store identity: every store gets a random id when it is created, recorded in the store (table
 * `store_meta`, name `store_id`) and beside it in the data dir (`<store>.id`, 0600). At open, a
 * store whose id is not the id file's, a store gone while its id file stays, and (SQLite) a
 * database whose `application_id` is not Charter's are refused with a StoreIdentityError; only
 * `charter init` (or `charter serve --init`, `createStore: if-missing`) starts anew.
 */
export class StoreIdentityError extends StoreError {
  constructor(message: string) {
    super("CORRUPT", message);
  }
}

export function isStoreIdentityError(err: unknown): err is StoreIdentityError {
  return err instanceof StoreIdentityError;
}

/** SQLite's `PRAGMA application_id` of a Charter store: "CHRT". */
export const CHARTER_APPLICATION_ID = 0x43485254;

/** How to start anew, in every refusal. */
export const START_ANEW =
  "to start anew with an empty store and new signing keys (every grant, key and audit record of the old one is lost), run `charter init`";

/** The name in `store_meta` of the store's id. */
export const STORE_ID_META = "store_id";

/** The id file of the SQLite store `file`. */
export function storeIdFile(file: string): string {
  return `${file}.id`;
}

/** A new store id: 128 random bits, hex. */
export function newStoreId(): string {
  return randomBytes(16).toString("hex");
}

/** The id an id file records, or undefined when there is none. */
export function readStoreIdFile(idFile: string): string | undefined {
  if (!existsSync(idFile)) return undefined;
  return readFileSync(idFile, "utf8").trim();
}

/** Writes the id file (0600); never creates a directory (the data dir is prepared before the store opens). */
export function writeStoreIdFile(idFile: string, id: string): void {
  if (existsSync(dirname(idFile))) writeFileSync(idFile, `${id}\n`, { mode: 0o600 });
}

/** Whether a SQLite store file holds a database (an empty file is none: SQLite would make a new one in it). */
export function sqliteStorePresent(file: string): boolean {
  try {
    return statSync(file).size > 0;
  } catch {
    return false;
  }
}

/**
 * Before a SQLite store is opened: refuses a store that is gone while its id file says one was
 * there, and a missing store when not told to create one.
 */
export function checkSqliteStoreBeforeOpen(file: string, create: boolean): void {
  if (sqliteStorePresent(file)) return;
  const idFile = storeIdFile(file);
  const recorded = readStoreIdFile(idFile);
  if (recorded !== undefined)
    throw new StoreIdentityError(
      `the store ${file} is gone, but ${idFile} says store ${recorded} was there: restore the store (with its -wal file) from a backup, or, ${START_ANEW}`,
    );
  if (!create)
    throw new StoreIdentityError(
      `there is no store at ${file}: create one with \`charter init\` (or \`charter serve --init\`, or set createStore: if-missing)`,
    );
}

/**
 * Reconciles the store's own id with the id file: a store without an id (new, or made before
 * store ids) gets one; an id file missing is written; an id that differs is refused before
 * anything is written. Answers the store's id.
 */
export async function reconcileStoreId(
  store: {
    readonly read: () => Promise<string | undefined>;
    /** Records the id unless one is there; answers the one there now (another opener's may have won). */
    readonly claim: (id: string) => Promise<string>;
  },
  idFile: string,
  what: string,
): Promise<string> {
  const recorded = readStoreIdFile(idFile);
  let id = await store.read();
  if (recorded !== undefined && id !== recorded)
    throw new StoreIdentityError(
      `${what} is not the store this data dir was serving: its id is ${id ?? "(none)"}, ${idFile} says ${recorded}; put the right store back, or, ${START_ANEW}`,
    );
  // Two openers of a new store at once (replicas starting together) both get the first one's id.
  id ??= await store.claim(newStoreId());
  if (recorded === undefined) writeStoreIdFile(idFile, id);
  return id;
}

/** The 32 bits of a store id kept in the SQLite header's `user_version`, read by the per-call integrity check. */
export function storeIdTag(id: string): number {
  return Buffer.from(id.slice(0, 8).padEnd(8, "0"), "hex").readInt32BE(0);
}
