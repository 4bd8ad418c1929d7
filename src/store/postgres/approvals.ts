import type pg from "pg";
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
import { inChainUnit, type ChainUnit, type Chain } from "./chain.js";

/** Why an approved approval could not be consumed: its status now, "missing", or "mismatch". */
export type ConsumeProblem = ApprovalStatus | "missing" | "mismatch";

const COLS = APPROVAL_COLUMNS.join(", ");
const LIVE = "status IN ('pending', 'approved')";
const INSERT = `INSERT INTO approvals (${COLS}) VALUES (${APPROVAL_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})`;
const UPDATE = `UPDATE approvals SET status = $2, approved_by_json = $3, decided_at = $4, decided_by = $5, note = $6, status_reason_json = $7 WHERE id = $1`;
const EVENTS = "SELECT seq, kind, at, approval_json FROM approval_events";

async function one(
  tx: pg.PoolClient | pg.Pool,
  sql: string,
  params: unknown[],
): Promise<ApprovalRow | undefined> {
  return (await tx.query<ApprovalRow>(sql, params)).rows[0];
}

/**
 * Writes the approval's new state, its feed event and its audit record, inside a unit of work
 * that holds the chain lock: the event's seq is the feed's max + 1, so it commits in order.
 */
async function record(
  unit: ChainUnit,
  a: Approval,
  kind: ApprovalEventKind,
  at: number,
  extra: { readonly argumentsJson?: string; readonly actor?: string } = {},
) {
  const row = approvalRow(a, extra.argumentsJson ?? "");
  if (extra.argumentsJson === undefined) {
    await unit.tx.query(UPDATE, [
      row.id,
      row.status,
      row.approved_by_json,
      row.decided_at,
      row.decided_by,
      row.note,
      row.status_reason_json,
    ]);
  } else {
    await unit.tx.query(
      INSERT,
      APPROVAL_COLUMNS.map((c) => row[c]),
    );
  }
  await unit.tx.query(
    "INSERT INTO approval_events (seq, owner, approval_id, kind, at, approval_json) SELECT coalesce(max(seq), 0) + 1, $1, $2, $3, $4, $5 FROM approval_events",
    [a.owner, a.id, kind, at, JSON.stringify(a)],
  );
  await unit.append(approvalAudit(a, kind, at, extra.actor));
}

/** Marks live approvals whose time ran out at `now` expired (never rejected); answers how many. */
export async function expireDue(unit: ChainUnit, now: number): Promise<number> {
  const { rows } = await unit.tx.query<ApprovalRow>(
    `SELECT ${COLS} FROM approvals WHERE ${LIVE} AND expires_at <= $1 ORDER BY expires_at, id COLLATE "C"`,
    [now],
  );
  for (const row of rows)
    await record(unit, { ...approvalFromRow(row), status: "expired" }, "expired", now);
  return rows.length;
}

/**
 * Inside a unit of work: the live approval of the draft's digest approved by `endorsers` (or the
 * draft created and approved), with its events and audit records; one already approved is
 * answered as it is (`charged: false`).
 */
export async function approveEndorsed(
  unit: ChainUnit,
  draft: ApprovalDraft,
  endorsers: readonly string[],
  decidedBy: string,
  at: number,
): Promise<{ readonly approval: Approval; readonly charged: boolean }> {
  const row = await one(
    unit.tx,
    `SELECT ${COLS} FROM approvals WHERE call_digest = $1 AND ${LIVE}`,
    [draft.approval.callDigest],
  );
  const live = row === undefined ? undefined : approvalFromRow(row);
  if (live?.status === "approved") return { approval: live, charged: false };
  if (live === undefined)
    await record(unit, draft.approval, "created", draft.approval.createdAt, {
      argumentsJson: draft.argumentsJson,
    });
  const pending = live ?? draft.approval;
  for (const endorser of endorsers)
    await unit.tx.query(
      "INSERT INTO approval_votes (approval_id, approver, outcome, at) VALUES ($1, $2, 'approve', $3) ON CONFLICT DO NOTHING",
      [pending.id, endorser, at],
    );
  const approved = endorsedApproval(pending, endorsers, decidedBy, at);
  await record(unit, approved, "decided", at, { actor: decidedBy });
  return { approval: approved, charged: true };
}

/** Consumes an approved approval inside a decision's unit of work; answers undefined when consumed. */
export async function consumeApproval(
  unit: ChainUnit,
  approvalId: string,
  callDigest: string,
  at: number,
): Promise<ConsumeProblem | undefined> {
  const row = await one(unit.tx, `SELECT ${COLS} FROM approvals WHERE id = $1`, [approvalId]);
  if (row === undefined) return "missing";
  const a = approvalFromRow(row);
  if (a.callDigest !== callDigest) return "mismatch";
  // Expiry is recorded by the caller once the effects' savepoint is rolled back.
  if (a.status === "approved" && at >= a.expiresAt) return "expired";
  if (a.status !== "approved") return a.status;
  await record(unit, { ...a, status: "consumed" }, "consumed", at);
  return undefined;
}

/**
 * The approvals part of the PostgreSQL store, the same behaviour as SQLite's: every write is a
 * unit of work under the chain lock with its feed event and audit record; one live approval per
 * call digest (checked under the lock, and a partial unique index besides).
 */
export function postgresApprovalStore(chain: Chain): ApprovalStore {
  const { pool } = chain;
  return {
    createApprovalOnce: (draft, now) =>
      inChainUnit(chain, async (unit) => {
        await expireDue(unit, now);
        const live = await one(
          unit.tx,
          `SELECT ${COLS} FROM approvals WHERE call_digest = $1 AND ${LIVE}`,
          [draft.approval.callDigest],
        );
        if (live !== undefined) return { approval: approvalFromRow(live), created: false };
        if (draft.approval.status !== "pending")
          throw new StoreError("CONFLICT", `approval ${draft.approval.id} must be created pending`);
        await record(unit, draft.approval, "created", draft.approval.createdAt, {
          argumentsJson: draft.argumentsJson,
        });
        return { approval: draft.approval, created: true };
      }),

    async getApproval(id) {
      const row = await one(pool, `SELECT ${COLS} FROM approvals WHERE id = $1`, [id]);
      return row === undefined
        ? undefined
        : { approval: approvalFromRow(row), argumentsJson: row.arguments_json };
    },

    async listApprovals(q) {
      const where: string[] = [];
      const params: unknown[] = [];
      const param = (v: unknown) => `$${params.push(v)}`;
      if (q.owner !== undefined) where.push(`owner = ${param(q.owner)}`);
      if (q.status !== undefined) where.push(`status = ${param(q.status)}`);
      if (q.after) {
        const created = param(q.after.createdAt);
        where.push(
          `(created_at < ${created} OR (created_at = ${created} AND id COLLATE "C" < ${param(q.after.id)}))`,
        );
      }
      const sql = `SELECT ${COLS} FROM approvals ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${param(q.limit)}`;
      return (await pool.query<ApprovalRow>(sql, params)).rows.map(approvalFromRow);
    },

    decideApproval: (v) =>
      inChainUnit(chain, async (unit) => {
        const row = await one(unit.tx, `SELECT ${COLS} FROM approvals WHERE id = $1`, [
          v.approvalId,
        ]);
        if (row === undefined)
          throw new StoreError("NOT_FOUND", `approval ${v.approvalId} is not known`);
        let a = approvalFromRow(row);
        if (a.status === "pending" && v.at >= a.expiresAt) {
          a = { ...a, status: "expired" };
          await record(unit, a, "expired", v.at);
        }
        if (a.status !== "pending")
          return { ok: false, problem: "not_pending", approval: a } as const;
        const voted = await unit.tx.query(
          "INSERT INTO approval_votes (approval_id, approver, outcome, at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
          [v.approvalId, v.approver, v.outcome, v.at],
        );
        if (voted.rowCount === 0)
          return { ok: false, problem: "already_answered", approval: a } as const;
        const decided = {
          decidedAt: v.at,
          decidedBy: v.approver,
          ...(v.note === undefined || v.note === "" ? {} : { note: v.note }),
        };
        if (v.outcome === "reject") {
          a = { ...a, status: "rejected", ...decided };
          await record(unit, a, "decided", v.at, { actor: v.approver });
        } else if (v.supersede) {
          a = { ...a, status: "superseded", ...decided, statusReason: v.supersede };
          await record(unit, a, "superseded", v.at, { actor: v.approver });
        } else {
          const approvedBy = [...a.approvedBy, v.approver];
          const done = approvedBy.length >= a.requiredApprovals;
          a = done ? { ...a, approvedBy, status: "approved", ...decided } : { ...a, approvedBy };
          await record(unit, a, done ? "decided" : "approver_added", v.at, { actor: v.approver });
        }
        return { ok: true, approval: a } as const;
      }),

    expireApprovals: (now) => inChainUnit(chain, (unit) => expireDue(unit, now)),

    supersedeApprovalsOf: (grantIds, reason, at) =>
      grantIds.length === 0
        ? Promise.resolve(0)
        : inChainUnit(chain, async (unit) => {
            const { rows } = await unit.tx.query<ApprovalRow>(
              `SELECT ${COLS} FROM approvals WHERE ${LIVE} AND grant_id = ANY($1::text[]) ORDER BY id COLLATE "C"`,
              [grantIds],
            );
            for (const row of rows) {
              await record(
                unit,
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
            }
            return rows.length;
          }),

    async approvalEvents(owner, afterSequence, limit) {
      const { rows } =
        owner === undefined
          ? await pool.query<ApprovalEventRow>(`${EVENTS} WHERE seq > $1 ORDER BY seq LIMIT $2`, [
              afterSequence,
              limit,
            ])
          : await pool.query<ApprovalEventRow>(
              `${EVENTS} WHERE owner = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
              [owner, afterSequence, limit],
            );
      return rows.map(approvalEventFromRow);
    },

    async lastApprovalSequence() {
      return (
        (
          await pool.query<{ seq: number }>(
            "SELECT coalesce(max(seq), 0)::bigint AS seq FROM approval_events",
          )
        ).rows[0]?.seq ?? 0
      );
    },
  };
}
