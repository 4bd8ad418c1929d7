/**
 * A SPIFFE ID (`spiffe://<trust-domain>/<path>`), read strictly by the SPIFFE ID standard: the
 * scheme `spiffe` in lowercase, a trust domain of lowercase letters, digits, `.`, `-` and `_` (so
 * no userinfo, port, query or fragment, no percent-encoding), path segments of letters, digits,
 * `.`, `-` and `_` that are neither empty nor `.` or `..`, at most 2048 bytes in all.
 */
export interface SpiffeId {
  /** The ID as written (its canonical form: a valid ID has exactly one spelling). */
  readonly text: string;
  readonly trustDomain: string;
  /** `/a/b`, or "" for the trust domain itself. */
  readonly path: string;
}

/** The longest SPIFFE ID the standard has implementations accept, in bytes. */
export const MAX_SPIFFE_ID_BYTES = 2048;
const MAX_TRUST_DOMAIN_BYTES = 255;
const PREFIX = "spiffe://";
const TRUST_DOMAIN = /^[a-z0-9._-]+$/;
const SEGMENT = /^[A-Za-z0-9._-]+$/;

/** `text` as a SPIFFE ID, or what is wrong with it (one line, without echoing the text). */
export function parseSpiffeId(text: string): SpiffeId | string {
  // Every valid character is ASCII, so a valid ID's length in characters is its length in bytes.
  if (text.length > MAX_SPIFFE_ID_BYTES) return `is longer than ${MAX_SPIFFE_ID_BYTES} bytes`;
  if (!text.startsWith(PREFIX)) return `does not start with ${PREFIX}`;
  if (/[?#]/.test(text)) return "has a query or a fragment";
  const rest = text.slice(PREFIX.length);
  const slash = rest.indexOf("/");
  const trustDomain = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? "" : rest.slice(slash);
  if (trustDomain === "") return "has no trust domain";
  if (trustDomain.includes("@")) return "has userinfo";
  if (trustDomain.includes(":")) return "has a port";
  if (!TRUST_DOMAIN.test(trustDomain))
    return "has a trust domain with other than lowercase letters, digits, '.', '-' and '_'";
  if (trustDomain.length > MAX_TRUST_DOMAIN_BYTES)
    return `has a trust domain longer than ${MAX_TRUST_DOMAIN_BYTES} bytes`;
  if (path !== "") {
    for (const segment of path.slice(1).split("/")) {
      if (segment === "") return "has an empty path segment (// or a trailing /)";
      if (segment === "." || segment === "..") return "has a . or .. path segment";
      if (!SEGMENT.test(segment))
        return "has a path segment with other than letters, digits, '.', '-' and '_'";
    }
  }
  return { text, trustDomain, path };
}

/**
 * Which SPIFFE IDs hold which roles: exact IDs, and `spiffe://td/p/*` entries for every ID under
 * the path `/p` of the trust domain `td` (`spiffe://td/*`: every workload of `td`).
 */
export interface SpiffeRoles {
  readonly exact: ReadonlyMap<string, readonly string[]>;
  /** `spiffe://td/p` (without the `/*`) -> roles. */
  readonly under: ReadonlyMap<string, readonly string[]>;
}

const NO_ROLES: ReadonlyMap<string, readonly string[]> = new Map();

/** No SPIFFE ID holds a role. */
export const NO_SPIFFE_ROLES: SpiffeRoles = { exact: NO_ROLES, under: NO_ROLES };

/**
 * `id=role,role;id2=role` as SPIFFE roles, or the problem. Each ID is a workload's (it has a
 * path), or ends in `/*`. A SPIFFE ID cannot hold `=`, `;` or `,`, so the text form is unambiguous.
 */
export function parseSpiffeRoles(text: string): SpiffeRoles | string {
  const exact = new Map<string, readonly string[]>();
  const under = new Map<string, readonly string[]>();
  for (const entry of text
    .split(";")
    .map((e) => e.trim())
    .filter((e) => e !== "")) {
    const eq = entry.indexOf("=");
    const key = entry.slice(0, Math.max(eq, 0)).trim();
    const roles = entry
      .slice(eq + 1)
      .split(",")
      .map((r) => r.trim())
      .filter((r) => r !== "");
    const shown = `"${entry.slice(0, 80)}"`;
    if (eq <= 0 || key === "" || roles.length === 0)
      return `${shown} is not spiffe://trust-domain/path=role[,role]`;
    const wildcard = key.endsWith("/*");
    const id = parseSpiffeId(wildcard ? key.slice(0, -2) : key);
    if (typeof id === "string") return `${shown}: the SPIFFE ID ${id}`;
    if (!wildcard && id.path === "")
      return `${shown}: a workload's SPIFFE ID has a path (spiffe://${id.trustDomain}/* for every workload of the trust domain)`;
    const into = wildcard ? under : exact;
    if (into.has(id.text)) return `"${key}" is listed twice`;
    into.set(id.text, roles);
  }
  return { exact, under };
}

/**
 * The roles `id` holds: its exact entry, else the entry of its longest path prefix (whole
 * segments, same trust domain); undefined when no entry covers it.
 */
export function spiffeRolesOf(mapping: SpiffeRoles, id: SpiffeId): readonly string[] | undefined {
  const exact = mapping.exact.get(id.text);
  if (exact !== undefined) return exact;
  // A leaf ID has a path, so `spiffe://td/*` covers it; an ID without a path is nobody's leaf.
  if (id.path === "") return undefined;
  let path = id.path;
  while (path !== "") {
    path = path.slice(0, path.lastIndexOf("/"));
    const roles = mapping.under.get(`${PREFIX}${id.trustDomain}${path}`);
    if (roles !== undefined) return roles;
  }
  return undefined;
}
