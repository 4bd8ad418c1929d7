import { auditLinkProblem, GENESIS_HASH, type AuditRow } from "./audit-chain.js";
import { isJsonObject } from "./json.js";

/** A signed statement of the chain head, as a witness or an archive holds it. */
export interface WitnessedCheckpoint {
  readonly seq: number;
  readonly hash: string;
  readonly at: number;
  /** A compact JWS over {seq, hash} by Charter's key ring. */
  readonly signature: string;
}

/** A witness line saying the records before `anchor` (whose hash is `hash`) were archived. */
export interface WitnessedArchive {
  readonly anchor: number;
  readonly hash: string;
  readonly at: number;
}

/** What a witness file holds, each item with its line number (from 1). */
export interface WitnessLog {
  readonly checkpoints: readonly {
    readonly line: number;
    readonly checkpoint: WitnessedCheckpoint;
  }[];
  readonly archives: readonly { readonly line: number; readonly archive: WitnessedArchive }[];
}

/** A parse outcome: the value, or what is wrong with the text (naming the line). */
export type LinesParsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

/** The witness file line of a checkpoint (JSON, no newline). */
export function witnessCheckpointLine(cp: WitnessedCheckpoint): string {
  return JSON.stringify({ seq: cp.seq, hash: cp.hash, at: cp.at, signature: cp.signature });
}

/** The witness file line that records an archive run: records before `anchor` left the store. */
export function witnessArchiveLine(archive: WitnessedArchive): string {
  return JSON.stringify({ archivedBefore: archive.anchor, hash: archive.hash, at: archive.at });
}

const isSeq = (v: unknown): v is number =>
  typeof v === "number" && Number.isSafeInteger(v) && v > 0;

function checkpointOf(value: unknown): WitnessedCheckpoint | undefined {
  if (!isJsonObject(value)) return undefined;
  const { seq, hash, at, signature } = value;
  return isSeq(seq) &&
    typeof hash === "string" &&
    typeof at === "number" &&
    typeof signature === "string"
    ? { seq, hash, at, signature }
    : undefined;
}

/** Splits JSON lines, skipping blank ones: each parsed value with its line number, or the first bad line. */
function jsonLines(text: string, what: string): LinesParsed<{ line: number; value: unknown }[]> {
  const out: { line: number; value: unknown }[] = [];
  const lines = text.split("\n");
  for (const [i, raw] of lines.entries()) {
    if (raw.trim() === "") continue;
    try {
      out.push({ line: i + 1, value: JSON.parse(raw) });
    } catch {
      return { ok: false, problem: `${what} line ${i + 1} is not JSON` };
    }
  }
  return { ok: true, value: out };
}

/** Reads a witness file: checkpoint lines and archive lines; any other line is a problem naming it. */
export function parseWitness(text: string): LinesParsed<WitnessLog> {
  const lines = jsonLines(text, "witness");
  if (!lines.ok) return lines;
  const checkpoints: WitnessLog["checkpoints"][number][] = [];
  const archives: WitnessLog["archives"][number][] = [];
  for (const { line, value } of lines.value) {
    const checkpoint = checkpointOf(value);
    if (checkpoint !== undefined) {
      checkpoints.push({ line, checkpoint });
      continue;
    }
    if (isJsonObject(value)) {
      const { archivedBefore, hash, at } = value;
      if (isSeq(archivedBefore) && typeof hash === "string" && typeof at === "number") {
        archives.push({ line, archive: { anchor: archivedBefore, hash, at } });
        continue;
      }
    }
    return {
      ok: false,
      problem: `witness line ${line} is neither a checkpoint nor an archive line`,
    };
  }
  return { ok: true, value: { checkpoints, archives } };
}

/** One archive line: a record exactly as stored (its text, so its hash can be recomputed) or a checkpoint. */
export type ArchiveItem =
  { readonly record: AuditRow } | { readonly checkpoint: WitnessedCheckpoint };

/** The archive file line of a record or a checkpoint (JSON, no newline). */
export function archiveLine(item: ArchiveItem): string {
  return "record" in item
    ? JSON.stringify({
        record: { seq: item.record.seq, hash: item.record.hash, entry: item.record.entry },
      })
    : JSON.stringify({ checkpoint: JSON.parse(witnessCheckpointLine(item.checkpoint)) as unknown });
}

/** An archive's records (oldest first, a record repeated at the seam of two runs kept once) and checkpoints. */
export interface ArchiveLog {
  readonly records: readonly AuditRow[];
  readonly checkpoints: readonly WitnessedCheckpoint[];
}

/** Reads an archive file (what `charter audit archive` appends); a bad line is a problem naming it. */
export function parseArchive(text: string): LinesParsed<ArchiveLog> {
  const lines = jsonLines(text, "archive");
  if (!lines.ok) return lines;
  const records: AuditRow[] = [];
  const checkpoints: WitnessedCheckpoint[] = [];
  for (const { line, value } of lines.value) {
    const record = isJsonObject(value) ? value["record"] : undefined;
    const checkpoint = checkpointOf(isJsonObject(value) ? value["checkpoint"] : undefined);
    if (isJsonObject(record)) {
      const { seq, hash, entry } = record;
      if (isSeq(seq) && typeof hash === "string" && typeof entry === "string") {
        const last = records.at(-1);
        // Each run starts with the anchor record the run before ended with.
        if (last?.seq === seq && last.hash === hash && last.entry === entry) continue;
        records.push({ seq, hash, entry });
        continue;
      }
    } else if (checkpoint !== undefined) {
      checkpoints.push(checkpoint);
      continue;
    }
    return { ok: false, problem: `archive line ${line} is neither a record nor a checkpoint` };
  }
  return { ok: true, value: { records, checkpoints } };
}

/**
 * Walks an archive's chain (pure): records run without a gap from record 1 (or from a record one
 * of its checkpoints anchors), each link recomputes, and every checkpoint it holds names a record
 * it holds with that hash. Answers what is wrong, naming the record, or undefined. Signatures are
 * checked by the caller.
 */
export function archiveChainProblem(archive: ArchiveLog): string | undefined {
  const first = archive.records[0];
  if (first === undefined) return "the archive holds no record";
  const signed = new Map(archive.checkpoints.map((cp) => [cp.seq, cp.hash]));
  if (first.seq !== 1 && signed.get(first.seq) !== first.hash)
    return `the archive starts at record ${first.seq}, which none of its checkpoints anchors`;
  let previous =
    first.seq === 1 ? { seq: 0, hash: GENESIS_HASH } : { seq: first.seq, hash: first.hash };
  for (const row of first.seq === 1 ? archive.records : archive.records.slice(1)) {
    const problem = auditLinkProblem(previous, row);
    if (problem !== undefined) return `archived ${problem}`;
    previous = { seq: row.seq, hash: row.hash };
  }
  const hashes = new Map(archive.records.map((r) => [r.seq, r.hash]));
  for (const cp of archive.checkpoints) {
    const hash = hashes.get(cp.seq);
    if (hash === undefined)
      return `the archive's checkpoint of record ${cp.seq} names a record it does not hold`;
    if (hash !== cp.hash) return `archived record ${cp.seq} does not match its signed checkpoint`;
  }
  return undefined;
}
