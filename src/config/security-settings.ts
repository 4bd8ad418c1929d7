import { isSharedStoreUrl } from "../store/database-url.js";
import { SETTINGS } from "./settings/index.js";

const KEK_ENV = SETTINGS.kek.env;

/**
 * The TLS and key-encryption settings together: pairs set together, mutual TLS with a certificate,
 * one KEK source, and a shared database only with a KEK. Reads the values already read into their
 * types; says nothing when one of them is not a string (that problem is reported on its own).
 */
export function securityProblems(values: Readonly<Record<string, unknown>>): string[] {
  const keys = [
    "tlsCert",
    "tlsKey",
    "tlsClientCa",
    "tlsClientRoles",
    "tlsSpiffeRoles",
    "kekFile",
    "kek",
  ] as const;
  if (keys.some((key) => typeof values[key] !== "string")) return [];
  const problems: string[] = [];
  const str = (key: (typeof keys)[number]) => values[key] as string;
  if ((str("tlsCert") === "") !== (str("tlsKey") === ""))
    problems.push("tlsCert and tlsKey are set together (the certificate and its private key)");
  if (str("tlsClientCa") !== "" && str("tlsCert") === "")
    problems.push("tlsClientCa (mutual TLS) needs tlsCert and tlsKey");
  if (str("tlsClientRoles") !== "" && str("tlsClientCa") === "")
    problems.push("tlsClientRoles needs tlsClientCa (client certificates)");
  if (str("tlsSpiffeRoles") !== "" && str("tlsClientCa") === "")
    problems.push("tlsSpiffeRoles needs tlsClientCa (the CA that signs the SVIDs)");
  if (str("kek") !== "" && str("kekFile") !== "")
    problems.push(`set one of kekFile and ${KEK_ENV}, not both`);
  const database = values["database"];
  if (
    typeof database === "string" &&
    requiresKek(database) &&
    str("kek") === "" &&
    str("kekFile") === ""
  ) {
    problems.push(
      `a postgres:// database is shared: signing keys must be encrypted at rest; set kekFile or ${KEK_ENV}`,
    );
  }
  return problems;
}

/** A store other machines can read (PostgreSQL) holds signing keys only encrypted. */
export function requiresKek(databaseUrl: string): boolean {
  return isSharedStoreUrl(databaseUrl);
}
