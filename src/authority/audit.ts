import { auditLinkProblem, GENESIS_HASH, type AuditRow } from "../core/audit-chain.js";
import type { AuditCheckpoint, AuditEntry, Store } from "../store/port.js";
import { signCheckpoint, verifyCheckpoint, type KeyRing } from "../token/index.js";
import type { AuthorityContext, TokenSettings } from "./context.js";

/**
 * Signs checkpoints of the audit chain head now and then: once the store has reported
 * `everyRecords` durable appends since the last one (in the background), and when asked.
 */
export interface AuditCheckpointer {
  /** Signs a checkpoint of the head now, unless it is checkpointed already (the periodic tick and shutdown call it). */
  checkpoint(): Promise<AuditCheckpoint | undefined>;
}

export interface CheckpointerDeps {
  readonly store: Store;
  readonly ring: KeyRing;
  readonly tokens: Pick<TokenSettings, "issuer" | "audience">;
  readonly now: () => number;
  /** Hands each signed checkpoint to the witnesses outside the store (`createAuditWitness`); never throws. */
  readonly witness?: (checkpoint: AuditCheckpoint) => Promise<void>;
}

/**
 * Checkpoints: a compact JWS by the key ring over {seq, hash} of the chain head, stored beside the
 * log. A checkpoint is signed after every `everyRecords` records this process appended, on every
 * tick of the server's timer when there are new records, and at shutdown; cutting records that a
 * checkpoint covers off the end of the log is then detected by `verifyAudit`.
 */
export function createAuditCheckpointer(
  deps: CheckpointerDeps,
  everyRecords: number,
): AuditCheckpointer {
  let since = 0;
  let running: Promise<AuditCheckpoint | undefined> | undefined;
  let last: number | undefined;

  const sign = async (): Promise<AuditCheckpoint | undefined> => {
    last ??= (await deps.store.listCheckpoints()).at(-1)?.seq ?? 0;
    const head = await deps.store.auditHead();
    if (head === undefined || head.seq <= last) return undefined;
    const at = deps.now();
    const signature = await signCheckpoint(head, deps.ring, {
      issuer: deps.tokens.issuer,
      audience: deps.tokens.audience,
      now: at,
    });
    const checkpoint = { seq: head.seq, hash: head.hash, at, signature };
    await deps.store.putCheckpoint(checkpoint);
    last = head.seq;
    await deps.witness?.(checkpoint);
    return checkpoint;
  };
  const checkpoint = () => {
    running ??= sign().finally(() => {
      running = undefined;
    });
    return running;
  };
  // The store says what it appended (`onAuditAppended`): nobody else keeps count.
  deps.store.onAuditAppended((records) => {
    since += records;
    if (since < everyRecords) return;
    since = 0;
    // A failed checkpoint is retried by the next one; the chain itself is already durable.
    checkpoint().catch(() => undefined);
  });
  return { checkpoint };
}

/** The outcome of `verifyAudit`: the chain holds, or the first broken record and what is wrong with it. */
export type AuditVerification =
  | {
      readonly ok: true;
      readonly records: number;
      readonly checkpoints: number;
      readonly head?: { readonly seq: number; readonly hash: string };
      /** The first record the store keeps, when records before it were archived (`pruneAudit`). */
      readonly firstKept?: number;
    }
  | {
      readonly ok: false;
      readonly seq: number;
      readonly problem: string;
      readonly checked: number;
    };

const PAGE = 1000;

/** What `verifyAudit` also checks, and where it reports progress. */
export interface VerifyAuditOptions {
  readonly onProgress?: (seq: number) => void;
  /** Hashes a witness outside the store holds, by seq: each record named must still have it. */
  readonly witnessed?: ReadonlyMap<number, string>;
}

/**
 * Checks the whole log: every signed checkpoint verifies with Charter's keys; records run 1, 2, 3…
 * (or from an anchor: a record whose signed checkpoint the store kept when older records were
 * archived) without a gap; each holds its own seq and its hash covers the previous hash and its
 * text; a checkpointed (or witnessed) record still has the hash signed for it; and no checkpoint
 * names a record past the end (records cut off the end). Names the first broken record.
 */
export async function verifyAudit(
  ctx: Pick<AuthorityContext, "store" | "ring" | "tokens" | "now">,
  options: VerifyAuditOptions = {},
): Promise<AuditVerification> {
  const { onProgress, witnessed } = options;
  const checkpoints = await ctx.store.listCheckpoints();
  for (const cp of checkpoints) {
    const claims = await verifyCheckpoint(cp.signature, ctx.ring, {
      issuer: ctx.tokens.issuer,
      audience: ctx.tokens.audience,
      now: ctx.now(),
    });
    if (claims?.seq !== cp.seq || claims.hash !== cp.hash) {
      return {
        ok: false,
        seq: cp.seq,
        problem: `the checkpoint of record ${cp.seq} does not carry a valid signature`,
        checked: 0,
      };
    }
  }
  const signed = new Map(checkpoints.map((cp) => [cp.seq, cp.hash]));
  let previous = { seq: 0, hash: GENESIS_HASH };
  let firstKept: number | undefined;
  for (
    let page = await ctx.store.readAudit(0, PAGE);
    page.length > 0;
    page = await ctx.store.readAudit(previous.seq, PAGE)
  ) {
    for (const row of page) {
      if (previous.seq === 0 && row.seq > 1) {
        // Records before it were archived: only a signed checkpoint of this record anchors it.
        if (signed.get(row.seq) !== row.hash)
          return {
            ok: false,
            seq: 1,
            problem: `records 1 to ${row.seq - 1} are missing (the log starts at record ${row.seq}, which no signed checkpoint anchors)`,
            checked: 0,
          };
        firstKept = row.seq;
        previous = { seq: row.seq, hash: row.hash };
        continue;
      }
      const problem = auditLinkProblem(previous, row);
      if (problem !== undefined)
        return {
          ok: false,
          seq: Math.min(row.seq, previous.seq + 1),
          problem,
          checked: previous.seq,
        };
      const want = signed.get(row.seq);
      if (want !== undefined && want !== row.hash)
        return {
          ok: false,
          seq: row.seq,
          problem: `record ${row.seq} does not match its signed checkpoint`,
          checked: previous.seq,
        };
      const seen = witnessed?.get(row.seq);
      if (seen !== undefined && seen !== row.hash)
        return {
          ok: false,
          seq: row.seq,
          problem: `record ${row.seq} has hash ${row.hash}, its witnessed checkpoint ${seen} (a record up to ${row.seq} was rewritten)`,
          checked: previous.seq,
        };
      previous = { seq: row.seq, hash: row.hash };
    }
    onProgress?.(previous.seq);
  }
  const lastSigned = checkpoints.at(-1);
  if (lastSigned !== undefined && lastSigned.seq > previous.seq) {
    const first = previous.seq + 1;
    return {
      ok: false,
      seq: first,
      problem: `records ${first} to ${lastSigned.seq} are missing from the end of the log (a signed checkpoint covers record ${lastSigned.seq})`,
      checked: previous.seq,
    };
  }
  return {
    ok: true,
    records: previous.seq,
    checkpoints: checkpoints.length,
    ...(previous.seq > 0 ? { head: previous } : {}),
    ...(firstKept === undefined ? {} : { firstKept }),
  };
}

/** One exported record: its place, its chain hash and its content. */
export interface ExportedRecord {
  readonly seq: number;
  readonly hash: string;
  readonly entry: AuditEntry;
}

/** The records after `afterSeq`, oldest first, read a page at a time. */
export async function* readAuditRecords(
  ctx: Pick<AuthorityContext, "store">,
  afterSeq = 0,
): AsyncGenerator<ExportedRecord> {
  let after = afterSeq;
  for (
    let page = await ctx.store.readAudit(after, PAGE);
    page.length > 0;
    page = await ctx.store.readAudit(after, PAGE)
  ) {
    for (const row of page) {
      yield exported(row);
      after = row.seq;
    }
  }
}

/** The newest record's seq (0 for an empty log). */
export async function auditHeadSeq(ctx: Pick<AuthorityContext, "store">): Promise<number> {
  return (await ctx.store.auditHead())?.seq ?? 0;
}

/** Follows the log: every record after `afterSeq` as it is appended (by any process), until `signal` aborts. */
export async function* followAudit(
  ctx: Pick<AuthorityContext, "store">,
  afterSeq: number,
  signal: AbortSignal,
  pollMs = 250,
): AsyncGenerator<ExportedRecord> {
  let after = afterSeq;
  while (!signal.aborted) {
    for await (const record of readAuditRecords(ctx, after)) {
      yield record;
      after = record.seq;
      if (isAborted(signal)) return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, pollMs);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    });
  }
}

/** Read through a function, so that the compiler does not narrow it across an await. */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

function exported(row: AuditRow): ExportedRecord {
  return { seq: row.seq, hash: row.hash, entry: JSON.parse(row.entry) as AuditEntry };
}
