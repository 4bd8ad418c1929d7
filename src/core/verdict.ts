import type { Target } from "./target.js";

/** What Charter answers for one tool call. */
export type Decision = "allow" | "deny" | "require_approval" | "effect_suppressed";

/**
 * Why a call was denied (or suppressed). The first group is decided by the pure core in this
 * order; GRANT_INVALID, GRANT_REVOKED and LIMIT_EXCEEDED need state and are added by the shell;
 * POLICY_WITHDRAWN is `decideInForce`'s (the policy in force withdrew the grant or the action);
 * TARGET_MISMATCH, UNKNOWN_TARGET_KIND and AGENT_NOT_DELEGATED are the target check's
 * (`checkTarget`); STEP_CONFLICT is the shell's (a step asked again with another call);
 * RUN_RULE is a rule over the run (what it has seen, done, or counted in a window) that denied
 * the call or holds it for approval (the reason then says why).
 */
export const REASON_CODES = [
  "GRANT_EXPIRED",
  "UNKNOWN_ACTION",
  "EXPLICIT_DENY",
  "NOT_GRANTED",
  "INVALID_ARGUMENTS",
  "CONSTRAINT_VIOLATION",
  "RULE_DENY",
  "APPROVAL_MISMATCH",
  "APPROVAL_EXPIRED",
  "APPROVAL_REJECTED",
  "APPROVAL_CONSUMED",
  "SHADOW_MODE",
  "GRANT_INVALID",
  "GRANT_REVOKED",
  "LIMIT_EXCEEDED",
  "POLICY_WITHDRAWN",
  "TARGET_MISMATCH",
  "UNKNOWN_TARGET_KIND",
  "AGENT_NOT_DELEGATED",
  "STEP_CONFLICT",
  "RUN_RULE",
] as const;

export type ReasonCode = (typeof REASON_CODES)[number];

/** A reason code with a message written for the model that made the call. */
export interface Reason {
  readonly code: ReasonCode;
  readonly message: string;
}

/** A tool call as a gateway sees it: by tool name (what the model used) or by action id. */
export interface ToolCall {
  readonly callId: string;
  readonly toolName?: string;
  readonly actionId?: string;
  readonly arguments: unknown;
  /** What the call does once allowed; absent means "invoke the tool". */
  readonly target?: Target;
}

/**
 * The state of an owner's approval for one call digest: `pending` until enough distinct approvers
 * approved (`approved`) or one rejected (`rejected`); `consumed` once an allowed call used it;
 * `expired` when its time ran out first; `superseded` when the call was no longer approvable
 * (its grant revoked or expired, or the policy in force no longer allowing or asking for it).
 */
export const APPROVAL_STATUSES = [
  "pending",
  "approved",
  "rejected",
  "expired",
  "consumed",
  "superseded",
] as const;

export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** An approval record as the store holds it; bound to exactly one call digest. */
export interface ApprovalRecord {
  readonly id: string;
  readonly callDigest: string;
  readonly status: ApprovalStatus;
  /** Unix seconds after which the approval no longer counts. */
  readonly expiresAt: number;
}

/** The pure core's answer for one call. A deny is data, never an exception. */
export interface Verdict {
  readonly decision: Decision;
  readonly reason?: Reason;
  readonly callId: string;
  /** The resolved action id ("" when the call named nothing the catalog knows). */
  readonly actionId: string;
  /** The tool name ("" for an action without a tool). */
  readonly toolName: string;
  readonly resource?: string;
  /** The approval requirement (e.g. "owner", "manager") when approval is, or would be, needed. */
  readonly requirement?: string;
  /** The approval record the decision used, when one was supplied and relevant. */
  readonly approvalId?: string;
  readonly callDigest: string;
  /** The run the call was decided in, when it names one (its step's run id). */
  readonly runId?: string;
  /** For a call in a run: the labels the run had seen when the call was decided, sorted. */
  readonly runLabels?: readonly string[];
  /** The id of the rule over the run that denied the call or holds it for approval. */
  readonly rule?: string;
}
