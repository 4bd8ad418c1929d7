/** The TLS and key-encryption settings: pairs set together, roles parseable, a shared database only with a KEK. */
export function securityProblems(raw: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const key of [
    "tlsCert",
    "tlsKey",
    "tlsClientCa",
    "tlsClientRoles",
    "kekFile",
    "kek",
  ] as const) {
    if (typeof raw[key] !== "string") problems.push(`${key} must be a string`);
  }
  if (problems.length > 0) return problems;
  const str = (key: string) => raw[key] as string;
  if ((str("tlsCert") === "") !== (str("tlsKey") === ""))
    problems.push("tlsCert and tlsKey are set together (the certificate and its private key)");
  if (str("tlsClientCa") !== "" && str("tlsCert") === "")
    problems.push("tlsClientCa (mutual TLS) needs tlsCert and tlsKey");
  if (str("tlsClientRoles") !== "" && str("tlsClientCa") === "")
    problems.push("tlsClientRoles needs tlsClientCa (client certificates)");
  const roles = parseClientRoles(str("tlsClientRoles"));
  if (typeof roles === "string") problems.push(`tlsClientRoles: ${roles}`);
  if (str("kek") !== "" && str("kekFile") !== "")
    problems.push("set one of kekFile and CHARTER_KEK, not both");
  const database = raw["database"];
  if (
    typeof database === "string" &&
    requiresKek(database) &&
    str("kek") === "" &&
    str("kekFile") === ""
  ) {
    problems.push(
      "a postgres:// database is shared: signing keys must be encrypted at rest; set kekFile or CHARTER_KEK",
    );
  }
  return problems;
}

/** A store other machines can read (PostgreSQL) holds signing keys only encrypted. */
export function requiresKek(databaseUrl: string): boolean {
  return /^postgres(ql)?:/i.test(databaseUrl);
}

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
