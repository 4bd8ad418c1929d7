import type { Approval, ApprovalEvent } from "../core/approval.js";
import type { ApprovalStatus, Reason } from "../core/verdict.js";

/** A pending approval to record, with the call's canonical arguments (kept to re-check the call; never shown, never audited). */
export interface ApprovalDraft {
  readonly approval: Approval;
  readonly argumentsJson: string;
}

/** An approval as stored: the record and the call's canonical arguments. */
export interface StoredApproval {
  readonly approval: Approval;
  readonly argumentsJson: string;
}

/** Where a page of approvals starts: after this (createdAt, id), newest first. */
export interface ApprovalCursor {
  readonly createdAt: number;
  readonly id: string;
}

export interface ApprovalQuery {
  /** Only this owner's; undefined means every owner's. */
  readonly owner?: string;
  readonly status?: ApprovalStatus;
  readonly limit: number;
  readonly after?: ApprovalCursor;
}

/** One answer of one approver. */
export interface ApprovalVote {
  readonly approvalId: string;
  readonly approver: string;
  readonly outcome: "approve" | "reject";
  readonly note?: string;
  /** Unix seconds. */
  readonly at: number;
  /** On approve: the re-check found the call no longer approvable; the approval ends superseded with this reason. */
  readonly supersede?: Reason;
}

/** A vote counted (the approval after it), or refused because the approval is not pending or this approver answered already. */
export type VoteOutcome =
  | { readonly ok: true; readonly approval: Approval }
  | {
      readonly ok: false;
      readonly problem: "not_pending" | "already_answered";
      readonly approval: Approval;
    };

/**
 * Owners' approvals. Every change appends an approval event (the WatchApprovals feed) and an
 * audit record in the same unit of work.
 */
export interface ApprovalStore {
  /**
   * The live (pending or approved) approval of this call digest, or a new pending one: once per
   * digest, also under concurrency. Approvals past their expiry are marked expired first.
   */
  createApprovalOnce(
    draft: ApprovalDraft,
    now: number,
  ): Promise<{ readonly approval: Approval; readonly created: boolean }>;
  getApproval(id: string): Promise<StoredApproval | undefined>;
  /** Newest first (createdAt, then id, descending). */
  listApprovals(query: ApprovalQuery): Promise<Approval[]>;
  /** Counts a vote: distinct approvers, one rejection rejects. An unknown id is NOT_FOUND. */
  decideApproval(vote: ApprovalVote): Promise<VoteOutcome>;
  /** Marks every pending or approved approval whose time ran out at `now` expired; answers how many. */
  expireApprovals(now: number): Promise<number>;
  /** Ends the live approvals of these grants superseded (their grant was revoked); answers how many. */
  supersedeApprovalsOf(grantIds: readonly string[], reason: Reason, at: number): Promise<number>;
  /** Events after `afterSequence`, oldest first, at most `limit`; only `owner`'s when given. */
  approvalEvents(
    owner: string | undefined,
    afterSequence: number,
    limit: number,
  ): Promise<ApprovalEvent[]>;
  /** The sequence of the newest event (0 when none). */
  lastApprovalSequence(): Promise<number>;
}
