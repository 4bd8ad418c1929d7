import { StoreError } from "../port.js";

/** Where a PostgreSQL store lives: what pg connects with, the schema, and a name safe to print. */
export interface PostgresTarget {
  /** The URL pg connects with (the `schema` parameter removed); may hold a password: never print it. */
  readonly connectionString: string;
  /** The schema Charter's tables live in (`search_path` of every connection). */
  readonly schema: string;
  /** `postgres://user@host:port/database (schema s)`: the URL without its password, for messages. */
  readonly redacted: string;
  /** The URL's password ("" when none), so that messages can be scrubbed of it. */
  readonly password: string;
}

/** The schema when neither the URL nor the options name one. */
export const DEFAULT_SCHEMA = "public";

/** Unquoted, lower-case identifiers only: the name is spliced into SQL and startup options. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Reads a `postgres://` or `postgresql://` URL. `?schema=<name>` (or `schema` here, which wins)
 * picks the schema; every other parameter is pg's. A URL that does not parse, or a schema that is
 * not a plain lower-case identifier, is refused as UNAVAILABLE without echoing the URL.
 */
export function parsePostgresUrl(url: string, schema?: string): PostgresTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreError(
      "UNAVAILABLE",
      "the PostgreSQL url is not a valid URL (expected postgres://user@host:port/database)",
    );
  }
  const scheme = parsed.protocol.slice(0, -1).toLowerCase();
  if (scheme !== "postgres" && scheme !== "postgresql")
    throw new StoreError("UNAVAILABLE", `the PostgreSQL url has scheme "${scheme}:"`);
  const chosen = schema ?? parsed.searchParams.get("schema") ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(chosen)) {
    throw new StoreError(
      "UNAVAILABLE",
      `the PostgreSQL schema "${chosen.slice(0, 64)}" is not a lower-case identifier (a-z, 0-9, _; at most 63)`,
    );
  }
  parsed.searchParams.delete("schema");
  const password = decodeURIComponent(parsed.password);
  const user = parsed.username === "" ? "" : `${decodeURIComponent(parsed.username)}@`;
  const host = parsed.port === "" ? parsed.hostname : `${parsed.hostname}:${parsed.port}`;
  return {
    connectionString: parsed.href,
    schema: chosen,
    redacted: `${scheme}://${user}${host}${parsed.pathname} (schema ${chosen})`,
    password,
  };
}

/** `text` with every occurrence of `secret` replaced, so a password never reaches a message. */
export function scrub(text: string, secret: string): string {
  return secret === "" ? text : text.split(secret).join("***");
}
