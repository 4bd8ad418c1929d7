import {
  archiveChainProblem,
  parseArchive,
  parseWitness,
  type WitnessedCheckpoint,
} from "../core/audit-witness.js";
import { verifyCheckpoint } from "../token/index.js";
import { verifyAudit, type AuditVerification } from "./audit.js";
import type { AuthorityContext } from "./context.js";

/** What `verifyAuditWitnessed` checks besides the store: a witness file's text, an archive file's text. */
export interface WitnessedVerifyInput {
  readonly witness?: string;
  readonly archive?: string;
  readonly onProgress?: (seq: number) => void;
}

/** `verifyAudit`'s outcome, and on success how many witnessed checkpoints and archived records were checked. */
export type WitnessedVerification =
  | (Extract<AuditVerification, { ok: true }> & {
      readonly witnessed: number;
      /** Witnessed checkpoints before the kept log that no archive given covered (not checked). */
      readonly witnessedArchived: number;
      readonly archived?: number;
    })
  | Extract<AuditVerification, { ok: false }>;

type Ctx = Pick<AuthorityContext, "store" | "ring" | "tokens" | "now">;

const broken = (seq: number, problem: string): Extract<AuditVerification, { ok: false }> => ({
  ok: false,
  seq,
  problem,
  checked: 0,
});

async function signatureHolds(ctx: Ctx, cp: WitnessedCheckpoint): Promise<boolean> {
  const claims = await verifyCheckpoint(cp.signature, ctx.ring, {
    issuer: ctx.tokens.issuer,
    audience: ctx.tokens.audience,
    now: ctx.now(),
  });
  return claims?.seq === cp.seq && claims.hash === cp.hash;
}

/**
 * `verifyAudit`, and against copies kept outside the store: every checkpoint in the witness
 * (signed by Charter's keys) is in the store with the same hash at the same seq, the log reaches
 * the newest witnessed record, and the chain recomputes to every witnessed hash; records the store
 * no longer keeps need a witnessed archive line for the store's first record. With an archive:
 * its chain recomputes, its checkpoints verify, it joins the kept log at the store's first record,
 * and it holds the witnessed hashes before it. Names the checkpoint and what differs.
 */
export async function verifyAuditWitnessed(
  ctx: Ctx,
  input: WitnessedVerifyInput,
): Promise<WitnessedVerification> {
  const witness = parseWitness(input.witness ?? "");
  if (!witness.ok) return broken(0, witness.problem);
  const byseq = new Map<number, { line: number; checkpoint: WitnessedCheckpoint }>();
  for (const item of witness.value.checkpoints) {
    const { line, checkpoint } = item;
    if (!(await signatureHolds(ctx, checkpoint)))
      return broken(
        checkpoint.seq,
        `witnessed checkpoint ${checkpoint.seq} (witness line ${line}) does not carry a valid signature`,
      );
    const seen = byseq.get(checkpoint.seq);
    if (seen !== undefined && seen.checkpoint.hash !== checkpoint.hash)
      return broken(
        checkpoint.seq,
        `the witness holds two hashes for record ${checkpoint.seq} (lines ${seen.line} and ${line})`,
      );
    byseq.set(checkpoint.seq, item);
  }
  const witnessed = [...byseq.values()].sort((a, b) => a.checkpoint.seq - b.checkpoint.seq);
  const first = (await ctx.store.readAudit(0, 1))[0];
  const firstKept = first?.seq ?? 1;
  const headSeq = (await ctx.store.auditHead())?.seq ?? 0;
  const stored = new Map((await ctx.store.listCheckpoints()).map((cp) => [cp.seq, cp]));
  const kept = new Map<number, string>();
  const before: typeof witnessed = [];
  for (const { line, checkpoint } of witnessed) {
    const { seq, hash } = checkpoint;
    if (first !== undefined && seq < firstKept) {
      before.push({ line, checkpoint });
      continue;
    }
    if (seq > headSeq)
      return broken(
        headSeq + 1,
        `witnessed checkpoint ${seq} (witness line ${line}) covers record ${seq}, but the log ends at record ${headSeq}: records ${headSeq + 1} to ${seq} were cut off`,
      );
    const cp = stored.get(seq);
    if (cp === undefined)
      return broken(
        seq,
        `witnessed checkpoint ${seq} (witness line ${line}) is missing from the store`,
      );
    if (cp.hash !== hash)
      return broken(
        seq,
        `the store's checkpoint ${seq} has hash ${cp.hash}, the witnessed one (witness line ${line}) ${hash}`,
      );
    kept.set(seq, hash);
  }
  if (before.length > 0) {
    const anchored = witness.value.archives.some(
      ({ archive }) => archive.anchor === firstKept && archive.hash === first?.hash,
    );
    if (!anchored)
      return broken(
        1,
        `the log starts at record ${firstKept}, before which the witness holds checkpoint ${before[0]?.checkpoint.seq ?? 0}, but no witnessed archive run ends at record ${firstKept} (records 1 to ${firstKept - 1} were removed from the store)`,
      );
  }
  const result = await verifyAudit(ctx, {
    witnessed: kept,
    ...(input.onProgress ? { onProgress: input.onProgress } : {}),
  });
  if (!result.ok) return result;
  if (input.archive === undefined)
    return { ...result, witnessed: kept.size, witnessedArchived: before.length };

  const archive = parseArchive(input.archive);
  if (!archive.ok) return broken(0, archive.problem);
  const chain = archiveChainProblem(archive.value);
  if (chain !== undefined) return broken(0, chain);
  for (const cp of archive.value.checkpoints)
    if (!(await signatureHolds(ctx, cp)))
      return broken(
        cp.seq,
        `the archive's checkpoint of record ${cp.seq} does not carry a valid signature`,
      );
  const archived = new Map(archive.value.records.map((r) => [r.seq, r.hash]));
  const last = archive.value.records.at(-1)?.seq ?? 0;
  if (first !== undefined && archived.get(firstKept) !== first.hash)
    return broken(
      firstKept,
      archived.has(firstKept)
        ? `archived record ${firstKept} does not match the store's first record (the archive does not join the kept log)`
        : `the archive ends at record ${last}, the kept log starts at record ${firstKept} (the archive does not join the kept log)`,
    );
  for (const { line, checkpoint } of before) {
    const hash = archived.get(checkpoint.seq);
    if (hash === undefined)
      return broken(
        checkpoint.seq,
        `witnessed checkpoint ${checkpoint.seq} (witness line ${line}) is in neither the store nor the archive`,
      );
    if (hash !== checkpoint.hash)
      return broken(
        checkpoint.seq,
        `archived record ${checkpoint.seq} has hash ${hash}, its witnessed checkpoint (witness line ${line}) ${checkpoint.hash}`,
      );
  }
  return {
    ...result,
    witnessed: kept.size + before.length,
    witnessedArchived: 0,
    archived: archive.value.records.filter((r) => r.seq < firstKept).length,
  };
}
