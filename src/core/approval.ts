import type { ArgumentSummary } from "./approval-summary.js";
import type { Catalog } from "./catalog.js";
import { assess } from "./decide.js";
import type { TaskGrant } from "./grant.js";
import type { JsonSchema } from "./json.js";
import type { AuthoritySource, Policy } from "./policy.js";
import type { ApprovalStatus, Reason } from "./verdict.js";

/**
 * An owner's approval of one exact call (bound to its call digest): who asked, what for, how many
 * distinct approvers it needs, and where it stands. Never holds an argument value beyond the
 * safe summary.
 */
export interface Approval {
  readonly id: string;
  readonly grantId: string;
  readonly rootId: string;
  /** The agent that made the call. */
  readonly subject: string;
  /** Who decides: the grant's owner. */
  readonly owner: string;
  readonly actionId: string;
  readonly toolName: string;
  /** The requirement name (e.g. "owner", "manager"). */
  readonly requirement: string;
  /** Distinct approvers needed, fixed from the policy when the approval was created. */
  readonly requiredApprovals: number;
  readonly callDigest: string;
  /** The rule over the run that held the call, when one did (an argument rule or approval list otherwise). */
  readonly rule?: string;
  readonly summary: readonly ArgumentSummary[];
  readonly status: ApprovalStatus;
  /** Unix seconds. */
  readonly createdAt: number;
  /** Unix seconds after which it no longer counts (never after the grant's own expiry). */
  readonly expiresAt: number;
  /** Distinct approvers who approved so far, in order. */
  readonly approvedBy: readonly string[];
  /** When it left `pending` by a decision (approved, rejected, superseded). */
  readonly decidedAt?: number;
  /** Who made the deciding answer (the last approver, the rejecter); "charter" for a supersession. */
  readonly decidedBy?: string;
  readonly note?: string;
  /** Why it ended as it did when Charter ended it (superseded): a reason code and message. */
  readonly statusReason?: Reason;
}

/** What the shell knows of a call being re-checked when its owner approves it. */
export interface RecheckCall {
  readonly actionId: string;
  readonly arguments: unknown;
}

/**
 * Whether a call an owner is approving is still approvable (pure): the grant as it is now (its
 * validity window and caveats, via `decide`) and the policy in force now (the grant's sources
 * still active, no active global source denying the action, the action still allowed or
 * approval-listed by a source of the grant, no deny rule of those sources matching). Answers the
 * reason it is not, or undefined. Revocation is state; the shell checks it.
 */
export function recheckCall(
  grant: TaskGrant,
  policy: Policy,
  catalog: Catalog,
  call: RecheckCall,
  now: number,
): Reason | undefined {
  // Only the reason matters here: the call digest is not computed.
  const { verdict } = assess(
    grant,
    catalog,
    { callId: "recheck", actionId: call.actionId, arguments: call.arguments },
    { now, recheck: true },
  );
  if (verdict.decision === "deny" && verdict.reason) return verdict.reason;
  const sources = grant.sources.map((id) => policy.sources.get(id));
  // A suspended global source is skipped (turning it off only relaxes); any other source must still be active.
  const gone = grant.sources.find((id, i) => {
    const source = sources[i];
    return source === undefined || (source.status !== "active" && !source.global);
  });
  if (gone !== undefined) {
    return {
      code: "NOT_GRANTED",
      message: `The policy source "${gone}" this grant came from is no longer active.`,
    };
  }
  for (const source of policy.sources.values()) {
    if (
      source.status === "active" &&
      (source.global || grant.sources.includes(source.id)) &&
      source.deny.includes(call.actionId)
    ) {
      return {
        code: "EXPLICIT_DENY",
        message: `The policy source "${source.id}" now denies ${call.actionId}.`,
      };
    }
  }
  const active = sources.filter(
    (s): s is AuthoritySource => s !== undefined && s.status === "active",
  );
  const granted = active.some(
    (s) =>
      s.kind === "grant" && (s.allow.includes(call.actionId) || s.approval.includes(call.actionId)),
  );
  const capped = active.some(
    (s) => s.kind === "narrow" && s.allow.length > 0 && !s.allow.includes(call.actionId),
  );
  if (!granted || capped)
    return {
      code: "NOT_GRANTED",
      message: `The policy no longer grants ${call.actionId} to this task.`,
    };
  for (const source of active) {
    for (const rule of source.caveats.get(call.actionId)?.rules ?? []) {
      if (rule.then === "deny" && matches(catalog, rule.when, call.arguments))
        return { code: "RULE_DENY", message: rule.reason };
    }
  }
  return undefined;
}

/** A rule that cannot be evaluated counts as matching (fail closed). */
function matches(catalog: Catalog, schema: JsonSchema, args: unknown): boolean {
  try {
    return catalog.schemas.compile(schema).check(args).length === 0;
  } catch {
    return true;
  }
}

export const APPROVAL_EVENT_KINDS = [
  "created",
  "approver_added",
  "decided",
  "expired",
  "consumed",
  "superseded",
] as const;

/** What happened to an approval: created, one more approver (still pending), decided, expired, consumed, superseded. */
export type ApprovalEventKind = (typeof APPROVAL_EVENT_KINDS)[number];

/** One event of the approvals feed: a sequence number (increasing per store), and the approval just after it. */
export interface ApprovalEvent {
  readonly sequence: number;
  readonly kind: ApprovalEventKind;
  readonly at: number;
  readonly approval: Approval;
}
