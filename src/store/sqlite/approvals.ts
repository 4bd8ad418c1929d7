import type { Database } from "better-sqlite3";
import type { Approval } from "../../core/approval.js";
import type { ApprovalStatus } from "../../core/verdict.js";
import {
  APPROVAL_COLUMNS,
  approvalAudit,
  approvalEventFromRow,
  approvalFromRow,
  approvalRow,
  type ApprovalEventRow,
  type ApprovalRow,
} from "../approval-row.js";
import { endorsedApproval } from "../endorsement-row.js";
import {
  StoreError,
  type ApprovalDraft,
  type ApprovalEventKind,
  type ApprovalStore,
} from "../port.js";
import type { AuditAppend } from "./audit.js";
import type { GroupCommit } from "./group-commit.js";

/** Why an approved approval could not be consumed: its status now, or "missing". */
export type ConsumeProblem = ApprovalStatus | "missing" | "mismatch";

/**
 * Inside a unit of work: the live approval of the draft's digest approved by `endorsers` (or the
 * draft created and approved), with its events and audit records; an approval already approved
 * is answered as it is (`charged: false`).
 */
export type ApproveEndorsed = (
  draft: ApprovalDraft,
  endorsers: readonly string[],
  decidedBy: string,
  at: number,
) => { readonly approval: Approval; readonly charged: boolean };

/** Consumes an approval inside a unit of work; answers undefined when consumed. */
export type ConsumeApproval = (
  approvalId: string,
  callDigest: string,
  at: number,
) => ConsumeProblem | undefined;

const LIVE = "status IN ('pending', 'approved')";

/**
 * The approvals half of the SQLite store. Every write is a unit of work of the group commit and
 * appends, in the same transaction, one approval event (the WatchApprovals feed, ordered by its
 * own gap-free sequence) and one audit record per change.
 */
export function sqliteApprovals(
  db: Database,
  group: GroupCommit,
  append: AuditAppend,
): {
  readonly store: ApprovalStore;
  readonly consume: ConsumeApproval;
  readonly expireDue: (now: number) => number;
  readonly approveEndorsed: ApproveEndorsed;
} {
  const cols = APPROVAL_COLUMNS.join(", ");
  const insert = db.prepare<[ApprovalRow], never>(
    `INSERT INTO approvals (${cols}) VALUES (${APPROVAL_COLUMNS.map((c) => `@${c}`).join(", ")})`,
  );
  const byId = db.prepare<[string], ApprovalRow>(`SELECT ${cols} FROM approvals WHERE id = ?`);
  const liveByDigest = db.prepare<[string], ApprovalRow>(
    `SELECT ${cols} FROM approvals WHERE call_digest = ? AND ${LIVE}`,
  );
  const due = db.prepare<[number], ApprovalRow>(
    `SELECT ${cols} FROM approvals WHERE ${LIVE} AND expires_at <= ? ORDER BY expires_at, id`,
  );
  const liveOfGrants = db.prepare<[string], ApprovalRow>(
    `SELECT ${cols} FROM approvals WHERE ${LIVE} AND grant_id IN (SELECT value FROM json_each(?)) ORDER BY id`,
  );
  const update = db.prepare<[ApprovalRow], never>(`
    UPDATE approvals SET status = @status, approved_by_json = @approved_by_json, decided_at = @decided_at,
      decided_by = @decided_by, note = @note, status_reason_json = @status_reason_json
    WHERE id = @id`);
  const vote = db.prepare<[string, string, string, number], never>(
    "INSERT INTO approval_votes (approval_id, approver, outcome, at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
  );
  const insertEvent = db.prepare<[string, string, string, number, string], never>(
    "INSERT INTO approval_events (owner, approval_id, kind, at, approval_json) VALUES (?, ?, ?, ?, ?)",
  );
  const eventsOf = db.prepare<[string, number, number], ApprovalEventRow>(
    "SELECT seq, kind, at, approval_json FROM approval_events WHERE owner = ? AND seq > ? ORDER BY seq LIMIT ?",
  );
  const events = db.prepare<[number, number], ApprovalEventRow>(
    "SELECT seq, kind, at, approval_json FROM approval_events WHERE seq > ? ORDER BY seq LIMIT ?",
  );
  const lastSeq = db
    .prepare<[], number>("SELECT coalesce(max(seq), 0) FROM approval_events")
    .pluck();

  /** Writes the approval's new state, its event and its audit record. */
  const record = (
    a: Approval,
    kind: ApprovalEventKind,
    at: number,
    extra: { readonly argumentsJson?: string; readonly actor?: string } = {},
  ) => {
    const { argumentsJson, actor } = extra;
    const row = approvalRow(a, argumentsJson ?? "");
    if (argumentsJson === undefined) update.run(row);
    else insert.run(row);
    insertEvent.run(a.owner, a.id, kind, at, JSON.stringify(a));
    append(approvalAudit(a, kind, at, actor));
  };

  const expireDue = (now: number): number => {
    const rows = due.all(now);
    for (const row of rows) record({ ...approvalFromRow(row), status: "expired" }, "expired", now);
    return rows.length;
  };

  const consume: ConsumeApproval = (approvalId, callDigest, at) => {
    const row = byId.get(approvalId);
    if (row === undefined) return "missing";
    const a = approvalFromRow(row);
    if (a.callDigest !== callDigest) return "mismatch";
    // Expiry is recorded by the caller once the effects' savepoint is rolled back (expireDue).
    if (a.status === "approved" && at >= a.expiresAt) return "expired";
    if (a.status !== "approved") return a.status;
    record({ ...a, status: "consumed" }, "consumed", at);
    return undefined;
  };

  const approveEndorsed: ApproveEndorsed = (draft, endorsers, decidedBy, at) => {
    const row = liveByDigest.get(draft.approval.callDigest);
    const live = row === undefined ? undefined : approvalFromRow(row);
    if (live?.status === "approved") return { approval: live, charged: false };
    if (live === undefined)
      record(draft.approval, "created", draft.approval.createdAt, {
        argumentsJson: draft.argumentsJson,
      });
    const pending = live ?? draft.approval;
    for (const endorser of endorsers) vote.run(pending.id, endorser, "approve", at);
    const approved = endorsedApproval(pending, endorsers, decidedBy, at);
    record(approved, "decided", at, { actor: decidedBy });
    return { approval: approved, charged: true };
  };

  const store: ApprovalStore = {
    createApprovalOnce: (draft, now) =>
      group.run(() => {
        expireDue(now);
        const live = liveByDigest.get(draft.approval.callDigest);
        if (live !== undefined) return { approval: approvalFromRow(live), created: false };
        if (draft.approval.status !== "pending")
          throw new StoreError("CONFLICT", `approval ${draft.approval.id} must be created pending`);
        record(draft.approval, "created", draft.approval.createdAt, {
          argumentsJson: draft.argumentsJson,
        });
        return { approval: draft.approval, created: true };
      }),
    async getApproval(id) {
      const row = byId.get(id);
      return row === undefined
        ? undefined
        : { approval: approvalFromRow(row), argumentsJson: row.arguments_json };
    },
    async listApprovals(q) {
      const where: string[] = [];
      const params: Record<string, string | number> = { limit: q.limit };
      if (q.owner !== undefined) {
        where.push("owner = @owner");
        params["owner"] = q.owner;
      }
      if (q.status !== undefined) {
        where.push("status = @status");
        params["status"] = q.status;
      }
      if (q.after) {
        where.push(
          "(created_at < @afterCreated OR (created_at = @afterCreated AND id < @afterId))",
        );
        params["afterCreated"] = q.after.createdAt;
        params["afterId"] = q.after.id;
      }
      const sql = `SELECT ${cols} FROM approvals ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at DESC, id DESC LIMIT @limit`;
      return db
        .prepare<[Record<string, string | number>], ApprovalRow>(sql)
        .all(params)
        .map(approvalFromRow);
    },
    decideApproval: (v) =>
      group.run(() => {
        const row = byId.get(v.approvalId);
        if (row === undefined)
          throw new StoreError("NOT_FOUND", `approval ${v.approvalId} is not known`);
        let a = approvalFromRow(row);
        if (a.status === "pending" && v.at >= a.expiresAt) {
          a = { ...a, status: "expired" };
          record(a, "expired", v.at);
        }
        if (a.status !== "pending")
          return { ok: false, problem: "not_pending", approval: a } as const;
        if (vote.run(v.approvalId, v.approver, v.outcome, v.at).changes === 0)
          return { ok: false, problem: "already_answered", approval: a } as const;
        const decided = {
          decidedAt: v.at,
          decidedBy: v.approver,
          ...(v.note === undefined || v.note === "" ? {} : { note: v.note }),
        };
        if (v.outcome === "reject") {
          a = { ...a, status: "rejected", ...decided };
          record(a, "decided", v.at, { actor: v.approver });
        } else if (v.supersede) {
          a = { ...a, status: "superseded", ...decided, statusReason: v.supersede };
          record(a, "superseded", v.at, { actor: v.approver });
        } else {
          const approvedBy = [...a.approvedBy, v.approver];
          const done = approvedBy.length >= a.requiredApprovals;
          a = done ? { ...a, approvedBy, status: "approved", ...decided } : { ...a, approvedBy };
          record(a, done ? "decided" : "approver_added", v.at, { actor: v.approver });
        }
        return { ok: true, approval: a } as const;
      }),
    expireApprovals: (now) => group.run(() => expireDue(now)),
    supersedeApprovalsOf: (grantIds, reason, at) =>
      group.run(() => {
        const rows = grantIds.length === 0 ? [] : liveOfGrants.all(JSON.stringify(grantIds));
        for (const row of rows)
          record(
            {
              ...approvalFromRow(row),
              status: "superseded",
              decidedAt: at,
              decidedBy: "charter",
              statusReason: reason,
            },
            "superseded",
            at,
          );
        return rows.length;
      }),
    async approvalEvents(owner, afterSequence, limit) {
      const rows =
        owner === undefined
          ? events.all(afterSequence, limit)
          : eventsOf.all(owner, afterSequence, limit);
      return rows.map(approvalEventFromRow);
    },
    async lastApprovalSequence() {
      return lastSeq.get() ?? 0;
    },
  };
  return { store, consume, expireDue, approveEndorsed };
}
