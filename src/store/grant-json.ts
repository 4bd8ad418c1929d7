import type { TaskGrant } from "../core/grant.js";
import type { GrantOrigin } from "../core/replay.js";
import { canonicalJson } from "../core/digest.js";
import { grantShapeProblem } from "../core/grant-shape.js";
import { StoreError } from "./port.js";

/** The text a grant is stored as: its canonical JSON, so equal grants are equal strings. */
export function grantToJson(grant: TaskGrant): string {
  return canonicalJson(grant);
}

/**
 * Reads a stored grant back. Text that is not JSON, JSON that fails the core's grant-shape check
 * (the same one a token's grant claim must pass), or a grant with another id than its row's is
 * CORRUPT: a damaged row must never be read as (a different) authority.
 */
export function grantFromJson(text: string, id: string): TaskGrant {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new StoreError("CORRUPT", `grant ${id}: stored JSON does not parse`, { cause: err });
  }
  const problem = grantShapeProblem(value);
  if (problem !== undefined)
    throw new StoreError("CORRUPT", `grant ${id}: the stored grant is malformed: ${problem}`);
  const grant = value as TaskGrant;
  if (grant.id !== id)
    throw new StoreError("CORRUPT", `grant ${id}: the stored grant has another id`);
  return grant;
}

/**
 * A grant's recorded origin (`origin_json`), or undefined for a grant stored without one. Text
 * that is not JSON, or not a compose request or delegation spec by its `kind`, is CORRUPT.
 */
export function grantOriginFromJson(text: string | null, id: string): GrantOrigin | undefined {
  if (text === null) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new StoreError("CORRUPT", `grant ${id}: stored origin does not parse`, { cause: err });
  }
  const v = value as { kind?: unknown; request?: unknown; spec?: unknown } | null;
  const shaped =
    typeof v === "object" &&
    v !== null &&
    ((v.kind === "composed" && typeof v.request === "object" && v.request !== null) ||
      (v.kind === "delegated" && typeof v.spec === "object" && v.spec !== null));
  if (!shaped) throw new StoreError("CORRUPT", `grant ${id}: the stored origin is malformed`);
  return value as GrantOrigin;
}
