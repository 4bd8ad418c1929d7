import { chainHash, GENESIS_HASH, type AuditRow } from "../core/audit-chain.js";
import { canonicalJson } from "../core/digest.js";
import type { AuditEntry } from "./port.js";
import { nativeSha256Hex } from "./sha256.js";

/** An audit record before the chain places it. */
export type AuditDraft = Omit<AuditEntry, "seq">;

/**
 * An audit record that writes its own canonical text once it knows its seq: the same text
 * `auditEntryJson` would write of its fields (a decision's, `decisionAuditText`, without building them).
 */
export type AuditText = (seq: number) => string;

/**
 * The record that follows `head` (undefined: the log is empty): seq = head + 1, the canonical
 * JSON text with its own seq inside, and hash = sha256(head hash, text), taken with node:crypto
 * (the same values as the core's pure-JS hash). Every adapter appends through this, under its own lock on the head.
 */
export function nextAuditRow(
  head: { readonly seq: number; readonly hash: string } | undefined,
  draft: AuditDraft | AuditText,
): AuditRow {
  const seq = (head?.seq ?? 0) + 1;
  const entry = typeof draft === "function" ? draft(seq) : auditEntryJson({ ...draft, seq });
  return { seq, entry, hash: chainHash(head?.hash ?? GENESIS_HASH, entry, nativeSha256Hex) };
}

/**
 * The RFC 8785 text of a record, leaving out fields that hold undefined (optional fields may be
 * present as undefined at run time: exactOptionalPropertyTypes does not see spreads of them).
 * Every audit record is flat — strings, finite numbers, booleans — and for those JSON.stringify
 * of each key and value, in UTF-16 key order, is the canonical text, written here in one pass (a
 * key or string with nothing to escape is quoted as it is); a record holding anything else is left to
 * canonicalJson.
 */
export function auditEntryJson(fields: Readonly<Record<string, unknown>>): string {
  let text = "";
  for (const key of Object.keys(fields).sort()) {
    const value = fields[key];
    if (value === undefined) continue;
    let json: string;
    if (typeof value === "string") json = quoted(value);
    else if (typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value)))
      json = JSON.stringify(value);
    else
      return canonicalJson(
        Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
      );
    text += `${text === "" ? "" : ","}${quoted(key)}:${json}`;
  }
  return `{${text}}`;
}

/** A string JSON.stringify writes as itself in quotes: no quote, backslash, control character or surrogate. */
// eslint-disable-next-line no-control-regex -- the control characters are what JSON.stringify escapes
const NOTHING_TO_ESCAPE = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/** JSON.stringify of a string, without the call when there is nothing to escape. */
export function quoted(text: string): string {
  return NOTHING_TO_ESCAPE.test(text) ? `"${text}"` : JSON.stringify(text);
}
