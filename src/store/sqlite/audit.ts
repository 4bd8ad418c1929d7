import type { Database } from "better-sqlite3";
import type { AuditRow } from "../../core/audit-chain.js";
import { nextAuditRow, type AuditDraft, type AuditText } from "../audit-row.js";
import { StoreError, type AuditCheckpoint, type AuditStore } from "../port.js";

/** Appends to the chain inside a unit of work (synchronously); answers the record's seq. */
export type AuditAppend = (draft: AuditDraft | AuditText) => number;

/**
 * The audit half of the SQLite store. `append` runs inside a unit of work's transaction: it reads
 * the head (the write lock is held, so no other process appends in between), and writes the next
 * record with seq = head + 1 and hash = sha256(head hash, record text). One chain per database.
 */
export function sqliteAudit(db: Database): {
  readonly append: AuditAppend;
  /** How many records `append` wrote since the last call: the group commit asks once a group is durable. */
  readonly takeAppended: () => number;
  readonly store: Omit<AuditStore, "appendAudit">;
} {
  const head = db.prepare<[], { seq: number; hash: string }>(
    "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1",
  );
  const insert = db.prepare<[number, string, string], never>(
    "INSERT INTO audit_log (seq, entry, hash) VALUES (?, ?, ?)",
  );
  const read = db.prepare<[number, number], AuditRow>(
    "SELECT seq, entry, hash FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?",
  );
  const putCheckpoint = db.prepare<[AuditCheckpoint], never>(`
    INSERT INTO audit_checkpoints (seq, hash, at, signature) VALUES (@seq, @hash, @at, @signature)
    ON CONFLICT (seq) DO NOTHING`);
  const checkpoints = db.prepare<[], AuditCheckpoint>(
    "SELECT seq, hash, at, signature FROM audit_checkpoints ORDER BY seq",
  );

  const anchorOk = db.prepare<[number], 1>(`
    SELECT 1 FROM audit_checkpoints c JOIN audit_log l ON l.seq = c.seq AND l.hash = c.hash
    WHERE c.seq = ?`);
  const pruneRecords = db.prepare<[number], never>("DELETE FROM audit_log WHERE seq < ?");
  const pruneCheckpoints = db.prepare<[number], never>(
    "DELETE FROM audit_checkpoints WHERE seq < ?",
  );
  const prune = db.transaction((anchorSeq: number) => {
    if (anchorOk.get(anchorSeq) === undefined)
      throw new StoreError(
        "NOT_FOUND",
        `no checkpoint of record ${anchorSeq} with that record's hash to anchor the kept log`,
      );
    return {
      records: pruneRecords.run(anchorSeq).changes,
      checkpoints: pruneCheckpoints.run(anchorSeq).changes,
    };
  });

  let appended = 0;
  const append: AuditAppend = (draft) => {
    const row = nextAuditRow(head.get(), draft);
    insert.run(row.seq, row.entry, row.hash);
    appended += 1;
    return row.seq;
  };
  const takeAppended = () => {
    const count = appended;
    appended = 0;
    return count;
  };

  return {
    append,
    takeAppended,
    store: {
      async readAudit(afterSeq, limit) {
        return read.all(afterSeq, limit);
      },
      async auditHead() {
        return head.get();
      },
      async putCheckpoint(checkpoint) {
        putCheckpoint.run(checkpoint);
      },
      async listCheckpoints() {
        return checkpoints.all();
      },
      async pruneAudit(anchorSeq) {
        return prune.immediate(anchorSeq);
      },
    },
  };
}
