import { isStoreError, StoreError, type StoreErrorCode } from "../port.js";

/**
 * Translates whatever better-sqlite3 threw into a StoreError, once, at the adapter's edge.
 * Busy, locked, I/O and closed-database failures mean "could not answer" (UNAVAILABLE);
 * constraint violations are CONFLICT; a damaged file is CORRUPT. Anything unrecognised also
 * becomes UNAVAILABLE, so that no failure is ever read as an answer. The cause is kept.
 */
export function toStoreError(err: unknown, doing: string): StoreError {
  if (isStoreError(err)) return err;
  const code = sqliteCode(err);
  const detail = err instanceof Error ? err.message : String(err);
  return new StoreError(codeFor(code), `sqlite store could not ${doing}: ${detail}`, {
    cause: err,
  });
}

function codeFor(sqlite: string | undefined): StoreErrorCode {
  if (sqlite === undefined) return "UNAVAILABLE";
  if (sqlite.startsWith("SQLITE_CONSTRAINT")) return "CONFLICT";
  if (sqlite.startsWith("SQLITE_CORRUPT") || sqlite.startsWith("SQLITE_NOTADB")) return "CORRUPT";
  return "UNAVAILABLE";
}

/** The extended result code (`SQLITE_BUSY_SNAPSHOT`…) of a SqliteError, if it is one. */
function sqliteCode(err: unknown): string | undefined {
  if (!(err instanceof Error) || !("code" in err)) return undefined;
  return typeof err.code === "string" && err.code.startsWith("SQLITE_") ? err.code : undefined;
}
