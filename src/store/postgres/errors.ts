import { DatabaseError } from "pg";
import { isStoreError, StoreError, type StoreErrorCode } from "../port.js";
import { scrub } from "./url.js";

/**
 * Translates whatever pg threw into a StoreError, once, at the adapter's edge. Server errors are
 * read by SQLSTATE class: integrity violations (23: unique, foreign key, check…) are CONFLICT;
 * data or index corruption (XX001, XX002) is CORRUPT. Everything else — connection refused or
 * reset, connect and query timeouts, admin shutdown (57P01), a cancelled statement (57014),
 * serialization failures left after the retries (40001, 40P01), too many connections (53300),
 * and anything unrecognised — is UNAVAILABLE: the store could not answer, and the RPC fails
 * closed. The cause is kept; `secret` (the URL's password) is scrubbed from the message.
 */
export function toStoreError(err: unknown, doing: string, secret = ""): StoreError {
  if (isStoreError(err)) return err;
  const detail = scrub(describe(err), secret);
  return new StoreError(codeFor(err), `postgres store could not ${doing}: ${detail}`, {
    cause: err,
  });
}

/** The SQLSTATE of a server error, or undefined for client, network and timeout errors. */
export function sqlState(err: unknown): string | undefined {
  return err instanceof DatabaseError && typeof err.code === "string" ? err.code : undefined;
}

function codeFor(err: unknown): StoreErrorCode {
  const state = sqlState(err);
  if (state === undefined) return "UNAVAILABLE";
  if (state.startsWith("23")) return "CONFLICT";
  if (state === "XX001" || state === "XX002") return "CORRUPT";
  return "UNAVAILABLE";
}

/** A readable detail: the message, else the errno code (an AggregateError from a dual-stack connect has none). */
function describe(err: unknown): string {
  if (err instanceof AggregateError)
    return err.errors.map(describe).join("; ") || "connection failed";
  if (!(err instanceof Error)) return String(err);
  const code = "code" in err && typeof err.code === "string" ? err.code : undefined;
  return err.message !== "" ? err.message : (code ?? err.name);
}
