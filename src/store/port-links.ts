/**
 * A single-use approval link as stored: never the token, only its SHA-256. The link lets one
 * approver answer one approval, once, until it expires.
 */
export interface ApprovalLink {
  /** Lower-case hex SHA-256 of the link's token (see `src/authority/approval-links.ts`). */
  readonly tokenHash: string;
  readonly approvalId: string;
  /** The principal the link's holder answers as. */
  readonly approver: string;
  /** Unix seconds. */
  readonly createdAt: number;
  /** Unix seconds; the link is refused from then on. */
  readonly expiresAt: number;
  /** Unix seconds of its use, once used. */
  readonly usedAt?: number;
}

/** A link claimed for its one use, or why it cannot be. */
export type LinkRedemption =
  | { readonly ok: true; readonly link: ApprovalLink }
  | {
      readonly ok: false;
      readonly problem: "unknown" | "used" | "expired";
      readonly link?: ApprovalLink;
    };

/** Single-use approval links, stored only as hashes. */
export interface ApprovalLinkStore {
  /** Adds a link; a hash that exists already is a CONFLICT. */
  createApprovalLink(link: ApprovalLink): Promise<void>;
  /** The link whose token hashes to `tokenHash`, used or not; undefined when none. */
  getApprovalLink(tokenHash: string): Promise<ApprovalLink | undefined>;
  /**
   * Claims the link for its one use at `at`, atomically: of two redemptions racing, one gets it
   * and the other answers `used`. A link expired at `at` is `expired`, and stays unused.
   */
  redeemApprovalLink(tokenHash: string, at: number): Promise<LinkRedemption>;
  /**
   * The run of the call an approval holds: the run id of the first decision that answered
   * require_approval with it; undefined for a call outside any run (or an unknown approval).
   */
  approvalRun(approvalId: string): Promise<string | undefined>;
  /** Deletes the links that expired before `before` (Unix seconds), used or not; answers how many. */
  pruneApprovalLinks(before: number): Promise<number>;
}
