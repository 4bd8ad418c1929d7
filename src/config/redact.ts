import type { SecretKind } from "./settings/index.js";

/** What `charter config` prints in place of a secret. */
export const REDACTED = "REDACTED";

/** Query parameters that carry a password in a database URL (`?password=`, as libpq reads them). */
const PASSWORD_PARAMS = ["password", "pass", "passwd"];

/**
 * A secret setting's value as it may be shown: a secret value never (only whether it is set), a
 * URL without its password (in the user info or the query). A URL that does not parse is hidden
 * whole: a password in it cannot be found.
 */
export function redacted(value: unknown, kind: SecretKind | undefined): unknown {
  if (kind === undefined || typeof value !== "string" || value === "") return value;
  if (kind === "value") return REDACTED;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return REDACTED;
  }
  const params = [...url.searchParams.keys()].filter((k) =>
    PASSWORD_PARAMS.includes(k.toLowerCase()),
  );
  if (url.password === "" && params.length === 0) return value;
  if (url.password !== "") url.password = REDACTED;
  for (const key of params) url.searchParams.set(key, REDACTED);
  return url.href;
}
