import type { AuditRow } from "../core/audit-chain.js";
import type { Decision, ReasonCode } from "../core/verdict.js";
import type { ShadowFlip } from "../core/shadow-policy.js";

export const AUDIT_KINDS = [
  "decision",
  "grant.issued",
  "grant.delegated",
  "grant.revoked",
  "approval.created",
  "approval.approver_added",
  "approval.approved",
  "approval.rejected",
  "approval.expired",
  "approval.consumed",
  "approval.superseded",
  "endorsement.created",
  "endorsement.revoked",
  "call.unauthenticated",
  "call.permission_denied",
  "gateway.pin_refused",
  "result_reported",
  "webhook.delivery",
] as const;

export type AuditKind = (typeof AUDIT_KINDS)[number];

/**
 * One audit record: what happened, with ids, names, digests and codes — never argument values or
 * tokens. `seq` is its place in the one chain the store keeps.
 */
export interface AuditEntry {
  readonly seq: number;
  /** Unix seconds. */
  readonly at: number;
  readonly kind: AuditKind;
  readonly decisionId?: string;
  readonly grantId?: string;
  readonly rootId?: string;
  readonly subject?: string;
  readonly actionId?: string;
  readonly toolName?: string;
  readonly callId?: string;
  readonly callDigest?: string;
  readonly decision?: Decision;
  readonly reasonCode?: ReasonCode;
  readonly approvalId?: string;
  /** An endorsement created or revoked (`endorsement.*`). */
  readonly endorsementId?: string;
  readonly catalogVersion?: string;
  readonly policyVersion?: string;
  /** Who acted besides the grant's subject: the approver of an approval change. */
  readonly actor?: string;
  /** The authenticated caller (its principal) that asked for it: the gateway, the issuer, an approver's UI. */
  readonly caller?: string;
  /** The RPC a refused call was made to (`/charter.v1.GrantService/IssueGrant`). */
  readonly rpc?: string;
  /** What was refused and why, in words (never a credential or an argument value). */
  readonly detail?: string;
  /** An unauthenticated refusal's peer address, without its port (`*`: counted past the tally's key cap). */
  readonly peer?: string;
  /** How many refused calls one `call.unauthenticated` record stands for (`src/authority/refusal-tally.ts`). */
  readonly count?: number;
  /** The first and last of those calls, Unix seconds. */
  readonly first?: number;
  readonly last?: number;
  /** A decision's run, when its call carried a step. */
  readonly runId?: string;
  /** A decision's step (`stepKey`: the tool call id, or the activation and attempt), when its call carried one. */
  readonly step?: string;
  /** A decision's run labels as seen when it was decided (sorted), when its call was in a run that had seen any. */
  readonly runLabels?: readonly string[];
  /** The rule over the run that denied a decision's call or held it for approval. */
  readonly rule?: string;
  /** A decision's shadow policy version, when one was configured (docs/policy-testing.md#shadow-policies). */
  readonly shadowPolicyVersion?: string;
  /** Where the shadow policy decided a decision otherwise: its verdict, reason code and rule (never applied). */
  readonly shadowFlip?: ShadowFlip;
  /** A reported result (`result_reported`): whether the call failed (its window charges released). */
  readonly failed?: boolean;
  /** A reported result: the labels it newly added to the call's run (sorted; names only). */
  readonly labels?: readonly string[];
  /** A reported result: the static labels it took back from the call's run (sorted). */
  readonly narrowed?: readonly string[];
  /** A webhook delivery attempt (`webhook.delivery`): the webhook's configured name (never its URL or secret). */
  readonly webhook?: string;
  /** The approval event delivered: its sequence (the `webhook-id`). */
  readonly eventSequence?: number;
  /** Which attempt of this event for this webhook (1 first). */
  readonly attempt?: number;
  /** The receiver's HTTP status, when it answered. */
  readonly httpStatus?: number;
  /** `delivered` (2xx), `failed` (retried later) or `abandoned` (the last attempt failed). */
  readonly delivery?: "delivered" | "failed" | "abandoned";
}

/** A signed statement of the chain head: record `seq` has hash `hash`. */
export interface AuditCheckpoint {
  readonly seq: number;
  readonly hash: string;
  readonly at: number;
  /** A compact JWS over {seq, hash} by the key ring. */
  readonly signature: string;
}

/**
 * The tamper-evident log: one chain, ordered by the store (each record's hash covers the previous
 * record's hash), appended by the units of work above; signed checkpoints of the head.
 */
export interface AuditStore {
  /** Records after `afterSeq`, oldest first, at most `limit`, exactly as stored (verification reads the text itself). */
  readAudit(afterSeq: number, limit: number): Promise<AuditRow[]>;
  /** The newest record's seq and hash, or undefined for an empty log. */
  auditHead(): Promise<{ readonly seq: number; readonly hash: string } | undefined>;
  /** Records a checkpoint; the same seq again is a no-op. */
  putCheckpoint(checkpoint: AuditCheckpoint): Promise<void>;
  /** Every checkpoint, oldest first. */
  listCheckpoints(): Promise<AuditCheckpoint[]>;
  /**
   * Retention of whole checkpointed segments: in one transaction deletes the records and the
   * checkpoints before `anchorSeq`, keeping record `anchorSeq` and its checkpoint, which then
   * anchor the kept chain. Fails NOT_FOUND (and deletes nothing) unless a checkpoint of record
   * `anchorSeq` exists with that record's hash. Answers how many records and checkpoints went.
   */
  pruneAudit(
    anchorSeq: number,
  ): Promise<{ readonly records: number; readonly checkpoints: number }>;
  /** Appends one record of an event that has no row of its own (a refused caller, a gateway refusal); answers its seq. */
  appendAudit(draft: Omit<AuditEntry, "seq">): Promise<number>;
}
