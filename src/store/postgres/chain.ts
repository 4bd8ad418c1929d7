import type pg from "pg";
import type { AuditRow } from "../../core/audit-chain.js";
import { nextAuditRow, type AuditDraft } from "../audit-row.js";
import { inTransaction } from "./transaction.js";

/** The pool the units of work run on, and where the records they append are reported once committed. */
export interface Chain {
  readonly pool: pg.Pool;
  /** Called after a unit of work commits, with how many audit records it appended (when any). */
  readonly appended: (records: number) => void;
}

/** A unit of work that holds the chain lock: its connection, and the append to the one audit chain. */
export interface ChainUnit {
  readonly tx: pg.PoolClient;
  /** Appends the next audit record (seq = head + 1, hash over the head's hash); answers its seq. */
  append(draft: AuditDraft): Promise<number>;
}

/**
 * The lock every writing unit of work takes first: transaction-scoped, keyed by the schema (two
 * replicas on one schema share it; other schemas on the database do not), released at COMMIT or
 * ROLLBACK after the commit is visible. The two-key form keeps it apart from the migration lock.
 */
const CHAIN_LOCK =
  "SELECT pg_advisory_xact_lock(hashtext('charter.chain'), hashtext(current_schema()))";

/**
 * Runs `work` as one READ COMMITTED transaction that first takes the chain lock. Every unit of
 * work that appends to the audit chain or the approval feed (grants, revocations, decisions,
 * approval changes) runs here, so across every replica they run one at a time: each statement
 * after the lock sees everything committed before it, the head read is the real head, and
 * sequences commit in order (a watcher resuming after seq N never skips one committed later with
 * a smaller seq, as a plain sequence could). One chain, ordered in the database. Deadlocks and
 * serialization failures rerun the whole unit (`inTransaction`); units are idempotent.
 */
export async function inChainUnit<T>(
  chain: Chain,
  work: (unit: ChainUnit) => Promise<T>,
): Promise<T> {
  // Counted per attempt: a rerun unit appends again from the start.
  let records = 0;
  const append = (tx: pg.PoolClient, draft: AuditDraft) => {
    records += 1;
    return appendAudit(tx, draft);
  };
  const result = await inTransaction(
    chain.pool,
    async (tx) => {
      records = 0;
      await tx.query(CHAIN_LOCK);
      return work({ tx, append: (draft) => append(tx, draft) });
    },
    { isolation: "read committed" },
  );
  if (records > 0) chain.appended(records);
  return result;
}

async function appendAudit(tx: pg.PoolClient, draft: AuditDraft): Promise<number> {
  const head = (
    await tx.query<AuditRow>("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1")
  ).rows[0];
  const row = nextAuditRow(head, draft);
  await tx.query("INSERT INTO audit_log (seq, entry, hash) VALUES ($1, $2, $3)", [
    row.seq,
    row.entry,
    row.hash,
  ]);
  return row.seq;
}
