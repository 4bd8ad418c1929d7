import { sha256Hex, type Hash } from "./digest.js";
import { isJsonObject } from "./json.js";

/** The hash the first audit record chains to. */
export const GENESIS_HASH = "0".repeat(64);

/** One audit record as stored: its sequence, its canonical JSON text and its chain hash. */
export interface AuditRow {
  readonly seq: number;
  readonly entry: string;
  readonly hash: string;
}

/**
 * A record's hash: sha256 over the previous record's hash, a newline and the record's canonical
 * JSON. The hash is passed in (the store appends with a native one); every sha256 gives the same value.
 */
export function chainHash(previousHash: string, entryJson: string, hash: Hash = sha256Hex): string {
  return hash(`${previousHash}\n${entryJson}`);
}

/**
 * Checks one record against the one before it (pure): its sequence follows, the sequence inside
 * its text is its own (a moved record holds another's), and its hash covers the previous hash
 * and its text (with `hash`, pure JS unless one is passed). Answers what is wrong, naming the record, or undefined.
 */
export function auditLinkProblem(
  previous: { readonly seq: number; readonly hash: string },
  row: AuditRow,
  hash: Hash = sha256Hex,
): string | undefined {
  if (row.seq !== previous.seq + 1) {
    return row.seq > previous.seq + 1
      ? `record ${previous.seq + 1} is missing (record ${previous.seq} is followed by record ${row.seq})`
      : `record ${row.seq} is out of order (after record ${previous.seq})`;
  }
  let inner: unknown;
  try {
    inner = JSON.parse(row.entry);
  } catch {
    return `record ${row.seq} is not JSON`;
  }
  const seq = isJsonObject(inner) ? inner["seq"] : undefined;
  if (seq !== row.seq)
    return `record ${row.seq} holds the content of record ${typeof seq === "number" ? seq : "?"} (records were reordered or edited)`;
  if (chainHash(previous.hash, row.entry, hash) !== row.hash) {
    return `record ${row.seq} does not match its hash (its content was edited, or record ${previous.seq} before it was)`;
  }
  return undefined;
}
