import type { Approval } from "../core/approval.js";
import { ENDORSEMENT_STATUSES, type Endorsement } from "../core/endorsement.js";
import { StoreError } from "./port.js";
import type { AuditDraft } from "./audit-row.js";

/** A row of the `endorsements` table, as every adapter names its columns. */
export interface EndorsementRow {
  readonly id: string;
  readonly grant_id: string;
  readonly owner: string;
  readonly subject: string;
  readonly action_id: string;
  readonly requirement: string;
  readonly rule: string | null;
  readonly bounds_json: string;
  readonly max_calls: number;
  readonly used_calls: number;
  readonly created_at: number;
  readonly expires_at: number;
  readonly endorsed_by: string;
  readonly approval_id: string;
  readonly status: string;
  readonly revoked_at: number | null;
  readonly revoked_by: string | null;
}

export const ENDORSEMENT_COLUMNS = [
  "id",
  "grant_id",
  "owner",
  "subject",
  "action_id",
  "requirement",
  "rule",
  "bounds_json",
  "max_calls",
  "used_calls",
  "created_at",
  "expires_at",
  "endorsed_by",
  "approval_id",
  "status",
  "revoked_at",
  "revoked_by",
] as const satisfies readonly (keyof EndorsementRow)[];

export function endorsementRow(e: Endorsement): EndorsementRow {
  return {
    id: e.id,
    grant_id: e.grantId,
    owner: e.owner,
    subject: e.subject,
    action_id: e.actionId,
    requirement: e.requirement,
    rule: e.rule ?? null,
    bounds_json: e.boundsJson,
    max_calls: e.maxCalls,
    used_calls: e.usedCalls,
    created_at: e.createdAt,
    expires_at: e.expiresAt,
    endorsed_by: e.endorsedBy,
    approval_id: e.approvalId,
    status: e.status,
    revoked_at: e.revokedAt ?? null,
    revoked_by: e.revokedBy ?? null,
  };
}

const STATUSES: ReadonlySet<string> = new Set(ENDORSEMENT_STATUSES);

/** Reads a row back; a status this version does not know is CORRUPT. */
export function endorsementFromRow(row: EndorsementRow): Endorsement {
  if (!STATUSES.has(row.status))
    throw new StoreError("CORRUPT", `endorsement ${row.id}: unknown status ${row.status}`);
  return {
    id: row.id,
    grantId: row.grant_id,
    owner: row.owner,
    subject: row.subject,
    actionId: row.action_id,
    requirement: row.requirement,
    ...(row.rule === null ? {} : { rule: row.rule }),
    boundsJson: row.bounds_json,
    maxCalls: row.max_calls,
    usedCalls: row.used_calls,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    endorsedBy: row.endorsed_by,
    approvalId: row.approval_id,
    status: row.status as Endorsement["status"],
    ...(row.revoked_at === null ? {} : { revokedAt: row.revoked_at }),
    ...(row.revoked_by === null ? {} : { revokedBy: row.revoked_by }),
  };
}

/** The audit record of an endorsement created or revoked: ids and names, never its bounds' values. */
export function endorsementAudit(
  e: Endorsement,
  kind: "endorsement.created" | "endorsement.revoked",
  at: number,
  actor: string,
  caller: string | undefined,
): AuditDraft {
  return {
    at,
    kind,
    endorsementId: e.id,
    approvalId: e.approvalId,
    grantId: e.grantId,
    subject: e.subject,
    actionId: e.actionId,
    actor,
    ...(caller === undefined ? {} : { caller }),
    detail: `requirement ${e.requirement}, ${e.maxCalls} calls until ${e.expiresAt}`,
  };
}

/** The approval minted by endorsements: the draft (or live pending one) approved by the endorsers. */
export function endorsedApproval(
  a: Approval,
  endorsers: readonly string[],
  decidedBy: string,
  at: number,
): Approval {
  const approvedBy = [...a.approvedBy, ...endorsers.filter((e) => !a.approvedBy.includes(e))];
  return { ...a, approvedBy, status: "approved", decidedAt: at, decidedBy };
}

/** A charge refused inside a unit of work (spent, expired or revoked meanwhile): the unit rolls back, nothing is written. */
export class ChargeRefused extends StoreError {
  constructor(id: string) {
    super("CONFLICT", `endorsement ${id} could not be charged`);
  }
}
