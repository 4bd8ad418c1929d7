import type { TaskGrant } from "../../core/grant.js";
import { canonicalJson } from "../../core/digest.js";
import { isJsonObject } from "../../core/json.js";
import { StoreError } from "../port.js";

/** The text a grant is stored as: its canonical JSON, so equal grants are equal strings. */
export function grantToJson(grant: TaskGrant): string {
  return canonicalJson(grant);
}

const STRING_FIELDS = ["id", "rootId", "subject", "owner", "purpose", "profile", "catalogVersion"] as const;
const NUMBER_FIELDS = ["issuedAt", "expiresAt"] as const;
const LIST_FIELDS = ["chain", "allowed", "approvalRequired", "denied", "sources"] as const;

/**
 * Reads a stored grant back. Text that is not JSON, or JSON that is not shaped like a grant with
 * the row's id, is CORRUPT: a damaged row must never be read as (a different) authority.
 */
export function grantFromJson(text: string, id: string): TaskGrant {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new StoreError("CORRUPT", `grant ${id}: stored JSON does not parse`, { cause: err });
  }
  const problem = grantShapeProblem(value, id);
  if (problem !== undefined) throw new StoreError("CORRUPT", `grant ${id}: stored JSON ${problem}`);
  return value as unknown as TaskGrant;
}

function grantShapeProblem(value: unknown, id: string): string | undefined {
  if (!isJsonObject(value)) return "is not an object";
  if (value["id"] !== id) return "has another id";
  for (const f of STRING_FIELDS) if (typeof value[f] !== "string") return `has no string ${f}`;
  for (const f of NUMBER_FIELDS) if (typeof value[f] !== "number") return `has no number ${f}`;
  for (const f of LIST_FIELDS) if (!isStringList(value[f])) return `has no string list ${f}`;
  if (value["parentId"] !== null && typeof value["parentId"] !== "string") return "has no parentId";
  if (value["mode"] !== "live" && value["mode"] !== "shadow") return "has no mode";
  if (!isJsonObject(value["caveats"])) return "has no caveats";
  const limits = value["limits"];
  if (!isJsonObject(limits) || typeof limits["maxDelegationDepth"] !== "number") return "has no limits";
  return undefined;
}

function isStringList(value: unknown): boolean {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}
