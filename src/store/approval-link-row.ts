import type { ApprovalLink } from "./port-links.js";

/** An approval link as both adapters keep it: times as Unix seconds. */
export interface ApprovalLinkRow {
  readonly token_hash: string;
  readonly approval_id: string;
  readonly approver: string;
  readonly created_at: number | string;
  readonly expires_at: number | string;
  readonly used_at: number | string | null;
}

/** The columns of a link row, in the order both adapters select them. */
export const APPROVAL_LINK_COLUMNS =
  "token_hash, approval_id, approver, created_at, expires_at, used_at";

/** Reads a row back (PostgreSQL answers BIGINT as text). */
export function approvalLinkOf(row: ApprovalLinkRow): ApprovalLink {
  return {
    tokenHash: row.token_hash,
    approvalId: row.approval_id,
    approver: row.approver,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    ...(row.used_at === null ? {} : { usedAt: Number(row.used_at) }),
  };
}
