import { create } from "@bufbuild/protobuf";
import type { Approval, ApprovalEvent, ApprovalEventKind } from "../core/approval.js";
import type { ArgumentSummary } from "../core/approval-summary.js";
import { displayJson, displayText } from "../core/display-text.js";
import type { ApprovalStatus } from "../core/verdict.js";
import {
  ApprovalEventKind as PbEventKind,
  ApprovalOutcome as PbOutcome,
  WatchApprovalsResponseSchema,
  type WatchApprovalsResponse,
} from "../gen/charter/v1/approval_pb.js";
import {
  ApprovalSchema,
  ApprovalStatus as PbApprovalStatus,
  ArgumentDisplay as PbDisplay,
  ArgumentSummarySchema,
  ReasonSchema,
  type Approval as PbApproval,
  type ArgumentSummary as PbArgumentSummary,
} from "../gen/charter/v1/common_pb.js";
import { DecodeError } from "./decode-error.js";

// The same enum convention as enums.ts: exhaustive X_TO_PROTO tables; xFromProto answers
// undefined for a value the table does not map.

export const APPROVAL_STATUS_TO_PROTO: Readonly<Record<ApprovalStatus, PbApprovalStatus>> = {
  pending: PbApprovalStatus.PENDING,
  approved: PbApprovalStatus.APPROVED,
  rejected: PbApprovalStatus.REJECTED,
  expired: PbApprovalStatus.EXPIRED,
  consumed: PbApprovalStatus.CONSUMED,
  superseded: PbApprovalStatus.SUPERSEDED,
};

export const APPROVAL_EVENT_TO_PROTO: Readonly<Record<ApprovalEventKind, PbEventKind>> = {
  created: PbEventKind.CREATED,
  approver_added: PbEventKind.APPROVER_ADDED,
  decided: PbEventKind.DECIDED,
  expired: PbEventKind.EXPIRED,
  consumed: PbEventKind.CONSUMED,
  superseded: PbEventKind.SUPERSEDED,
};

const DISPLAY_TO_PROTO: Readonly<Record<ArgumentSummary["shown"], PbDisplay>> = {
  value: PbDisplay.VALUE,
  digest: PbDisplay.DIGEST,
  hidden: PbDisplay.HIDDEN,
};

const STATUS_OF = new Map<number, ApprovalStatus>(
  (Object.entries(APPROVAL_STATUS_TO_PROTO) as [ApprovalStatus, PbApprovalStatus][]).map(
    ([d, p]) => [p, d],
  ),
);

/** A status filter: UNSPECIFIED means any status (undefined); a value this version does not know is a DecodeError naming `field`. */
export function approvalStatusFilterFromProto(
  status: PbApprovalStatus,
  field: string,
): ApprovalStatus | undefined {
  if (status === PbApprovalStatus.UNSPECIFIED) return undefined;
  const known = STATUS_OF.get(status);
  if (known === undefined)
    throw new DecodeError(field, `unknown approval status ${String(status)}`);
  return known;
}

/** An owner's answer; UNSPECIFIED or an unknown value is a DecodeError naming `field`. */
export function approvalOutcomeFromProto(outcome: PbOutcome, field: string): "approve" | "reject" {
  if (outcome === PbOutcome.APPROVE) return "approve";
  if (outcome === PbOutcome.REJECT) return "reject";
  throw new DecodeError(field, "must be APPROVAL_OUTCOME_APPROVE or APPROVAL_OUTCOME_REJECT");
}

/**
 * An approval as its proto message: the safe summary, never the call's arguments, and every text
 * in it as {@link displayApproval} shows it.
 */
export function approvalToProto(a: Approval): PbApproval {
  return displayApproval(approvalMessage(a));
}

/**
 * An approval message as an owner may be shown it: every text that a caller, an agent or a
 * policy wrote (argument paths and values, subject, owner, action and tool names, requirement,
 * approvers, note, status reason) with control, bidi and invisible characters as visible escapes
 * (`displayText`; a `value_json` stays JSON). HTML is left as text: a page must escape it. Ids and
 * digests are Charter's own and unchanged. Idempotent, so the CLI applies it again to what a
 * server answered.
 */
export function displayApproval(a: PbApproval): PbApproval {
  return create(ApprovalSchema, {
    ...a,
    actionId: displayText(a.actionId),
    toolName: displayText(a.toolName),
    requirement: displayText(a.requirement),
    subject: displayText(a.subject),
    owner: displayText(a.owner),
    decidedBy: displayText(a.decidedBy),
    note: displayText(a.note),
    approvedBy: a.approvedBy.map(displayText),
    summary: a.summary.map((s) =>
      create(ArgumentSummarySchema, {
        ...s,
        path: displayText(s.path),
        valueJson: displayJson(s.valueJson),
        digest: displayText(s.digest),
      }),
    ),
    ...(a.statusReason
      ? {
          statusReason: create(ReasonSchema, {
            ...a.statusReason,
            message: displayText(a.statusReason.message),
          }),
        }
      : {}),
  });
}

function approvalMessage(a: Approval): PbApproval {
  return create(ApprovalSchema, {
    id: a.id,
    grantId: a.grantId,
    rootId: a.rootId,
    callDigest: a.callDigest,
    actionId: a.actionId,
    toolName: a.toolName,
    requirement: a.requirement,
    requiredApprovals: a.requiredApprovals,
    subject: a.subject,
    owner: a.owner,
    status: APPROVAL_STATUS_TO_PROTO[a.status],
    createdAt: BigInt(a.createdAt),
    expiresAt: BigInt(a.expiresAt),
    decidedAt: BigInt(a.decidedAt ?? 0),
    decidedBy: a.decidedBy ?? "",
    note: a.note ?? "",
    approvedBy: [...a.approvedBy],
    summary: a.summary.map(summaryToProto),
    ...(a.statusReason
      ? {
          statusReason: create(ReasonSchema, {
            code: a.statusReason.code,
            message: a.statusReason.message,
          }),
        }
      : {}),
  });
}

function summaryToProto(s: ArgumentSummary): PbArgumentSummary {
  return create(ArgumentSummarySchema, {
    path: s.path,
    display: DISPLAY_TO_PROTO[s.shown],
    ...(s.shown === "value" ? { valueJson: s.valueJson, truncated: s.truncated } : {}),
    ...(s.shown === "digest" ? { digest: s.digest } : {}),
  });
}

/** One event of the feed as a WatchApprovals message. */
export function approvalEventToProto(e: ApprovalEvent): WatchApprovalsResponse {
  return create(WatchApprovalsResponseSchema, {
    kind: APPROVAL_EVENT_TO_PROTO[e.kind],
    approval: approvalToProto(e.approval),
    sequence: BigInt(e.sequence),
    at: BigInt(e.at),
  });
}
