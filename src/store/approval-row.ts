import type { Approval } from "../core/approval.js";
import type { ArgumentSummary } from "../core/approval-summary.js";
import {
  APPROVAL_STATUSES,
  REASON_CODES,
  type ApprovalStatus,
  type Reason,
} from "../core/verdict.js";
import { isJsonObject } from "../core/json.js";
import {
  APPROVAL_EVENT_KINDS,
  StoreError,
  type ApprovalEvent,
  type ApprovalEventKind,
  type AuditKind,
} from "./port.js";

/** A row of the `approvals` table, as every adapter names its columns; absent optional fields are NULL. */
export interface ApprovalRow {
  readonly id: string;
  readonly grant_id: string;
  readonly root_id: string;
  readonly subject: string;
  readonly owner: string;
  readonly action_id: string;
  readonly tool_name: string;
  readonly requirement: string;
  readonly required_approvals: number;
  readonly call_digest: string;
  readonly summary_json: string;
  readonly arguments_json: string;
  readonly status: string;
  readonly created_at: number;
  readonly expires_at: number;
  readonly approved_by_json: string;
  readonly decided_at: number | null;
  readonly decided_by: string | null;
  readonly note: string | null;
  readonly status_reason_json: string | null;
  readonly rule: string | null;
}

export const APPROVAL_COLUMNS = [
  "id",
  "grant_id",
  "root_id",
  "subject",
  "owner",
  "action_id",
  "tool_name",
  "requirement",
  "required_approvals",
  "call_digest",
  "summary_json",
  "arguments_json",
  "status",
  "created_at",
  "expires_at",
  "approved_by_json",
  "decided_at",
  "decided_by",
  "note",
  "status_reason_json",
  "rule",
] as const satisfies readonly (keyof ApprovalRow)[];

export function approvalRow(a: Approval, argumentsJson: string): ApprovalRow {
  return {
    id: a.id,
    grant_id: a.grantId,
    root_id: a.rootId,
    subject: a.subject,
    owner: a.owner,
    action_id: a.actionId,
    tool_name: a.toolName,
    requirement: a.requirement,
    required_approvals: a.requiredApprovals,
    call_digest: a.callDigest,
    summary_json: JSON.stringify(a.summary),
    arguments_json: argumentsJson,
    status: a.status,
    created_at: a.createdAt,
    expires_at: a.expiresAt,
    approved_by_json: JSON.stringify(a.approvedBy),
    decided_at: a.decidedAt ?? null,
    decided_by: a.decidedBy ?? null,
    note: a.note ?? null,
    status_reason_json: a.statusReason ? JSON.stringify(a.statusReason) : null,
    rule: a.rule ?? null,
  };
}

const STATUSES: ReadonlySet<string> = new Set(APPROVAL_STATUSES);
const REASONS: ReadonlySet<string> = new Set(REASON_CODES);

/** Reads a row back; one this version cannot read is CORRUPT (never guessed at). */
export function approvalFromRow(row: ApprovalRow): Approval {
  const bad = (what: string) => new StoreError("CORRUPT", `approval ${row.id}: ${what}`);
  if (!STATUSES.has(row.status)) throw bad(`unknown status ${row.status}`);
  const summary = parseJson(row.summary_json, () => bad("summary is not JSON"));
  const approvedBy = parseJson(row.approved_by_json, () => bad("approved_by is not JSON"));
  if (
    !Array.isArray(summary) ||
    !Array.isArray(approvedBy) ||
    !approvedBy.every((x) => typeof x === "string")
  )
    throw bad("malformed summary or approvers");
  let statusReason: Reason | undefined;
  if (row.status_reason_json !== null) {
    const r = parseJson(row.status_reason_json, () => bad("status reason is not JSON"));
    if (
      !isJsonObject(r) ||
      typeof r["code"] !== "string" ||
      !REASONS.has(r["code"]) ||
      typeof r["message"] !== "string"
    )
      throw bad("malformed status reason");
    statusReason = r as unknown as Reason;
  }
  return {
    id: row.id,
    grantId: row.grant_id,
    rootId: row.root_id,
    subject: row.subject,
    owner: row.owner,
    actionId: row.action_id,
    toolName: row.tool_name,
    requirement: row.requirement,
    requiredApprovals: row.required_approvals,
    callDigest: row.call_digest,
    ...(row.rule === null ? {} : { rule: row.rule }),
    summary: summary as ArgumentSummary[],
    status: row.status as ApprovalStatus,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    approvedBy,
    ...(row.decided_at === null ? {} : { decidedAt: row.decided_at }),
    ...(row.decided_by === null ? {} : { decidedBy: row.decided_by }),
    ...(row.note === null ? {} : { note: row.note }),
    ...(statusReason ? { statusReason } : {}),
  };
}

function parseJson(text: string, fail: () => StoreError): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw fail();
  }
}

/** A row of the `approval_events` table (the WatchApprovals feed). */
export interface ApprovalEventRow {
  readonly seq: number;
  readonly kind: string;
  readonly at: number;
  readonly approval_json: string;
}

const EVENT_KINDS: ReadonlySet<string> = new Set(APPROVAL_EVENT_KINDS);

/** Reads an event back; an unknown kind or a text that is not JSON is CORRUPT. */
export function approvalEventFromRow(row: ApprovalEventRow): ApprovalEvent {
  if (!EVENT_KINDS.has(row.kind))
    throw new StoreError("CORRUPT", `approval event ${row.seq}: unknown kind ${row.kind}`);
  const raw = parseJson(
    row.approval_json,
    () => new StoreError("CORRUPT", `approval event ${row.seq}: not JSON`),
  );
  return {
    sequence: row.seq,
    kind: row.kind as ApprovalEventKind,
    at: row.at,
    approval: raw as Approval,
  };
}

/** The audit kind of an approval event. */
export function approvalAuditKind(kind: ApprovalEventKind, a: Approval): AuditKind {
  switch (kind) {
    case "created":
      return "approval.created";
    case "approver_added":
      return "approval.approver_added";
    case "decided":
      return a.status === "rejected" ? "approval.rejected" : "approval.approved";
    case "expired":
      return "approval.expired";
    case "consumed":
      return "approval.consumed";
    case "superseded":
      return "approval.superseded";
  }
}

/** The audit record of an approval's change: ids, names and the digest, never argument values. */
export function approvalAudit(
  a: Approval,
  kind: ApprovalEventKind,
  at: number,
  actor: string | undefined,
) {
  return {
    at,
    kind: approvalAuditKind(kind, a),
    approvalId: a.id,
    grantId: a.grantId,
    rootId: a.rootId,
    subject: a.subject,
    actionId: a.actionId,
    toolName: a.toolName,
    callDigest: a.callDigest,
    ...(actor === undefined ? {} : { actor }),
    ...(a.statusReason ? { reasonCode: a.statusReason.code } : {}),
  };
}
