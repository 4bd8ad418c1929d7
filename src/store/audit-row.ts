import { chainHash, GENESIS_HASH, type AuditRow } from "../core/audit-chain.js";
import { canonicalJson } from "../core/digest.js";
import type { AuditEntry } from "./port.js";
import { nativeSha256Hex } from "./sha256.js";

/** An audit record before the chain places it. */
export type AuditDraft = Omit<AuditEntry, "seq">;

/**
 * The record that follows `head` (undefined: the log is empty): seq = head + 1, the canonical
 * JSON text with its own seq inside, and hash = sha256(head hash, text), taken with node:crypto
 * (the same values as the core's pure-JS hash). Every adapter appends through this, under its own lock on the head.
 */
export function nextAuditRow(head: { readonly seq: number; readonly hash: string } | undefined, draft: AuditDraft): AuditRow {
  const seq = (head?.seq ?? 0) + 1;
  // Optional fields may be present as undefined at run time (exactOptionalPropertyTypes does not see spreads of them).
  const fields: Record<string, unknown> = { ...draft, seq };
  const entry = canonicalJson(Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)));
  return { seq, entry, hash: chainHash(head?.hash ?? GENESIS_HASH, entry, nativeSha256Hex) };
}
