/** `cn=role,role;cn2=role` as a map of certificate subject CN to role names, or the problem. */
export function parseClientRoles(text: string): ReadonlyMap<string, readonly string[]> | string {
  const out = new Map<string, readonly string[]>();
  for (const entry of text
    .split(";")
    .map((e) => e.trim())
    .filter((e) => e !== "")) {
    const eq = entry.indexOf("=");
    const cn = entry.slice(0, eq).trim();
    const roles = entry
      .slice(eq + 1)
      .split(",")
      .map((r) => r.trim())
      .filter((r) => r !== "");
    if (eq <= 0 || cn === "" || roles.length === 0)
      return `"${entry.slice(0, 80)}" is not cn=role[,role]`;
    if (out.has(cn)) return `"${cn}" is listed twice`;
    out.set(cn, roles);
  }
  return out;
}

/** A config file's `tlsClientRoles` map (`{cn: [roles]}`) in the text form. */
export function rolesMapText(map: Record<string, unknown>): string {
  return Object.entries(map)
    .map(([cn, roles]) => `${cn}=${Array.isArray(roles) ? roles.join(",") : String(roles)}`)
    .join(";");
}
