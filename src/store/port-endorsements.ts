import type { Approval } from "../core/approval.js";
import type { Endorsement } from "../core/endorsement.js";
import type { ApprovalDraft } from "./port-approvals.js";

/** Which endorsements to list: newest first (createdAt, then id, descending). */
export interface EndorsementQuery {
  /** Only this owner's; undefined means every owner's. */
  readonly owner?: string;
  /** Only those active, unexpired and with calls left at this time (Unix seconds). */
  readonly liveAt?: number;
  readonly limit: number;
  readonly after?: { readonly createdAt: number; readonly id: string };
}

/** A held call approved by endorsements: its approval (pending as drafted) and the endorsements charged. */
export interface EndorsedCall {
  readonly draft: ApprovalDraft;
  /** One per distinct endorser; each is charged one use. */
  readonly endorsements: readonly Endorsement[];
  /** What the approval records as its decider (`endorsement:<id>,…`). */
  readonly decidedBy: string;
  readonly now: number;
}

/** A revocation: the endorsement after it, and whether this call revoked it (false: it was already). */
export interface RevokeOutcome {
  readonly endorsement: Endorsement;
  readonly revoked: boolean;
}

/**
 * Scoped endorsements. Every change writes its audit record in the same unit of work; using
 * endorsements writes the approval they mint with its approval events and audit records.
 */
export interface EndorsementStore {
  /** Records a new endorsement and its `endorsement.created` audit record; the same id twice is CONFLICT. */
  createEndorsement(endorsement: Endorsement, caller?: string): Promise<void>;
  getEndorsement(id: string): Promise<Endorsement | undefined>;
  listEndorsements(query: EndorsementQuery): Promise<Endorsement[]>;
  /** The live endorsements (active, unexpired, calls left) of one grant, action and requirement, oldest first. */
  liveEndorsements(
    grantId: string,
    actionId: string,
    requirement: string,
    now: number,
  ): Promise<Endorsement[]>;
  /** Revokes an endorsement (its `endorsement.revoked` record); an unknown id is NOT_FOUND. */
  revokeEndorsement(id: string, by: string, at: number, caller?: string): Promise<RevokeOutcome>;
  /**
   * In one unit of work: charges one use of each endorsement (each still active, unexpired, with
   * calls left), and approves the call — the live approval of its digest, or the draft created —
   * with the endorsers as its approvers, with its events and audit records. When any charge
   * fails nothing is written and the answer is undefined; an approval already approved for the
   * digest is answered as it is and nothing is charged.
   */
  approveByEndorsements(call: EndorsedCall): Promise<Approval | undefined>;
  /** Deletes the endorsements that expired before `before` (their audit records stay); answers how many. */
  pruneEndorsements(before: number): Promise<number>;
}
