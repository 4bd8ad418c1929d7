import { REASON_CODES, type Decision, type ReasonCode } from "../core/verdict.js";
import {
  SHADOW_REASON_CODES,
  type ShadowFlip,
  type ShadowReasonCode,
} from "../core/shadow-policy.js";
import { auditEntryJson, quoted, type AuditText } from "./audit-row.js";
import {
  StoreError,
  type CommitOutcome,
  type CommitRefusalCode,
  type DecisionRecord,
  type ReplayRow,
} from "./port.js";

/** A row of the `decisions` table, as every adapter names its columns; absent optional fields are NULL. */
export interface DecisionRow {
  readonly decision_id: string;
  readonly decided_at: number;
  readonly grant_id: string;
  readonly root_id: string;
  readonly subject: string;
  readonly action_id: string;
  readonly tool_name: string;
  readonly call_id: string;
  readonly call_digest: string;
  readonly decision: string;
  readonly reason_code: string | null;
  readonly approval_id: string | null;
  readonly catalog_version: string;
  readonly policy_version: string;
  readonly caller: string | null;
  readonly run_id: string | null;
  readonly step_key: string | null;
  /** JSON text of the sorted run labels; NULL without any (and for decisions made before). */
  readonly run_labels: string | null;
  readonly rule_id: string | null;
  /** With a shadow policy configured: its version; with a flip, what the shadow decided (NULL otherwise, and before). */
  readonly shadow_policy_version: string | null;
  readonly shadow_to: string | null;
  readonly shadow_reason_code: string | null;
  readonly shadow_rule: string | null;
}

export const DECISION_COLUMNS = [
  "decision_id",
  "decided_at",
  "grant_id",
  "root_id",
  "subject",
  "action_id",
  "tool_name",
  "call_id",
  "call_digest",
  "decision",
  "reason_code",
  "approval_id",
  "catalog_version",
  "policy_version",
  "caller",
  "run_id",
  "step_key",
  "run_labels",
  "rule_id",
  "shadow_policy_version",
  "shadow_to",
  "shadow_reason_code",
  "shadow_rule",
] as const satisfies readonly (keyof DecisionRow)[];

/** Every decision this version knows; a new one in the core fails compilation here until it is listed. */
const DECISIONS: Readonly<Record<Decision, true>> = {
  allow: true,
  deny: true,
  require_approval: true,
  effect_suppressed: true,
};
const REASONS: ReadonlySet<string> = new Set(REASON_CODES);
const SHADOW_REASONS: ReadonlySet<string> = new Set(SHADOW_REASON_CODES);

export function decisionRow(r: DecisionRecord): DecisionRow {
  return {
    decision_id: r.decisionId,
    decided_at: r.decidedAt,
    grant_id: r.grantId,
    root_id: r.rootId,
    subject: r.subject,
    action_id: r.actionId,
    tool_name: r.toolName,
    call_id: r.callId,
    call_digest: r.callDigest,
    decision: r.decision,
    reason_code: r.reasonCode ?? null,
    approval_id: r.approvalId ?? null,
    catalog_version: r.catalogVersion,
    policy_version: r.policyVersion,
    caller: r.caller ?? null,
    run_id: r.runId ?? null,
    step_key: r.stepKey ?? null,
    run_labels: r.runLabels === undefined ? null : JSON.stringify(sortedLabels(r.runLabels)),
    rule_id: r.rule ?? null,
    shadow_policy_version: r.shadowPolicyVersion ?? null,
    shadow_to: r.shadowFlip?.to ?? null,
    shadow_reason_code: r.shadowFlip?.reasonCode ?? null,
    shadow_rule: r.shadowFlip?.rule ?? null,
  };
}

/** Labels in the one order every adapter writes them (UTF-16 code units), each once. */
export function sortedLabels(labels: readonly string[]): string[] {
  return [...new Set(labels)].sort();
}

/** The run labels of a row; text that is not a JSON list of strings is CORRUPT. */
function runLabelsOf(row: DecisionRow): readonly string[] | undefined {
  if (row.run_labels === null) return undefined;
  let labels: unknown;
  try {
    labels = JSON.parse(row.run_labels);
  } catch {
    labels = undefined;
  }
  if (!Array.isArray(labels) || !labels.every((l) => typeof l === "string"))
    throw new StoreError(
      "CORRUPT",
      `decision ${row.decision_id}: run_labels is not a list of labels`,
    );
  return labels;
}

/** The shadow flip of a row; one this version cannot read (an unknown decision or code) is CORRUPT. */
function shadowFlipOf(row: DecisionRow): ShadowFlip | undefined {
  const id = row.decision_id;
  if (row.shadow_to === null) {
    if (row.shadow_reason_code !== null || row.shadow_rule !== null)
      throw new StoreError("CORRUPT", `decision ${id}: a shadow reason or rule without a flip`);
    return undefined;
  }
  if (!Object.hasOwn(DECISIONS, row.shadow_to))
    throw new StoreError("CORRUPT", `decision ${id}: unknown shadow decision ${row.shadow_to}`);
  if (row.shadow_reason_code !== null && !SHADOW_REASONS.has(row.shadow_reason_code))
    throw new StoreError(
      "CORRUPT",
      `decision ${id}: unknown shadow reason code ${row.shadow_reason_code}`,
    );
  return {
    to: row.shadow_to as Decision,
    ...(row.shadow_reason_code === null
      ? {}
      : { reasonCode: row.shadow_reason_code as ShadowReasonCode }),
    ...(row.shadow_rule === null ? {} : { rule: row.shadow_rule }),
  };
}

/** True when two rows hold the same record, column by column. */
export function sameDecisionRow(a: DecisionRow, b: DecisionRow): boolean {
  return DECISION_COLUMNS.every((c) => a[c] === b[c]);
}

/** Reads a row back; one this version cannot read (an unknown decision or reason code) is CORRUPT. */
export function decisionRecord(row: DecisionRow): DecisionRecord {
  const id = row.decision_id;
  if (!Object.hasOwn(DECISIONS, row.decision))
    throw new StoreError("CORRUPT", `decision ${id}: unknown decision ${row.decision}`);
  if (row.reason_code !== null && !REASONS.has(row.reason_code)) {
    throw new StoreError("CORRUPT", `decision ${id}: unknown reason code ${row.reason_code}`);
  }
  if (!Number.isSafeInteger(row.decided_at))
    throw new StoreError("CORRUPT", `decision ${id}: decided_at is not a time`);
  const runLabels = runLabelsOf(row);
  const shadowFlip = shadowFlipOf(row);
  const record: DecisionRecord = {
    decisionId: id,
    decidedAt: row.decided_at,
    grantId: row.grant_id,
    rootId: row.root_id,
    subject: row.subject,
    actionId: row.action_id,
    toolName: row.tool_name,
    callId: row.call_id,
    callDigest: row.call_digest,
    decision: row.decision as Decision,
    catalogVersion: row.catalog_version,
    policyVersion: row.policy_version,
  };
  return {
    ...record,
    ...(row.reason_code === null ? {} : { reasonCode: row.reason_code as ReasonCode }),
    ...(row.approval_id === null ? {} : { approvalId: row.approval_id }),
    ...(row.caller === null ? {} : { caller: row.caller }),
    ...(row.run_id === null ? {} : { runId: row.run_id }),
    ...(row.step_key === null ? {} : { stepKey: row.step_key }),
    ...(runLabels === undefined ? {} : { runLabels }),
    ...(row.rule_id === null ? {} : { rule: row.rule_id }),
    ...(row.shadow_policy_version === null
      ? {}
      : { shadowPolicyVersion: row.shadow_policy_version }),
    ...(shadowFlip === undefined ? {} : { shadowFlip }),
  };
}

const REFUSALS: ReadonlySet<string> = new Set<CommitRefusalCode>([
  "LIMIT_EXCEEDED",
  "APPROVAL_CONSUMED",
  "APPROVAL_EXPIRED",
]);

/**
 * The same decision committed again (a retry): the first outcome — also when the first commit
 * refused the allow and stored it as that deny; other content under its id is a CONFLICT.
 */
export function recommitOutcome(stored: DecisionRow, row: DecisionRow): CommitOutcome {
  if (sameDecisionRow(stored, row)) return { kind: "committed" };
  const refused =
    row.decision === "allow" &&
    stored.decision === "deny" &&
    stored.reason_code !== null &&
    REFUSALS.has(stored.reason_code);
  if (
    refused &&
    DECISION_COLUMNS.every((c) => c === "decision" || c === "reason_code" || stored[c] === row[c])
  ) {
    return {
      kind: "refused",
      reasonCode: stored.reason_code as CommitRefusalCode,
      detail: "refused when first committed",
    };
  }
  throw new StoreError(
    "CONFLICT",
    `decision ${row.decision_id} is recorded already with other content`,
  );
}

/** A decision's audit record: the same fields, never argument values or tokens. */
export function decisionAudit(r: DecisionRecord) {
  return {
    at: r.decidedAt,
    kind: "decision" as const,
    decisionId: r.decisionId,
    grantId: r.grantId,
    rootId: r.rootId,
    subject: r.subject,
    actionId: r.actionId,
    toolName: r.toolName,
    callId: r.callId,
    callDigest: r.callDigest,
    decision: r.decision,
    ...(r.reasonCode === undefined ? {} : { reasonCode: r.reasonCode }),
    ...(r.approvalId === undefined ? {} : { approvalId: r.approvalId }),
    catalogVersion: r.catalogVersion,
    policyVersion: r.policyVersion,
    ...(r.caller === undefined ? {} : { caller: r.caller }),
    ...(r.runId === undefined ? {} : { runId: r.runId }),
    ...(r.stepKey === undefined ? {} : { step: r.stepKey }),
    ...(r.runLabels === undefined ? {} : { runLabels: sortedLabels(r.runLabels) }),
    ...(r.rule === undefined ? {} : { rule: r.rule }),
    ...(r.shadowPolicyVersion === undefined ? {} : { shadowPolicyVersion: r.shadowPolicyVersion }),
    ...(r.shadowFlip === undefined ? {} : { shadowFlip: shadowFlipAudit(r.shadowFlip) }),
  };
}

/** A flip as the audit record holds it: only the fields it has. */
function shadowFlipAudit(f: ShadowFlip): ShadowFlip {
  return {
    to: f.to,
    ...(f.reasonCode === undefined ? {} : { reasonCode: f.reasonCode }),
    ...(f.rule === undefined ? {} : { rule: f.rule }),
  };
}

const REQUIRED_TEXT = [
  "decisionId",
  "grantId",
  "rootId",
  "subject",
  "actionId",
  "toolName",
  "callId",
  "callDigest",
  "decision",
  "catalogVersion",
  "policyVersion",
] as const;
const OPTIONAL_TEXT = [
  "reasonCode",
  "approvalId",
  "caller",
  "runId",
  "stepKey",
  "rule",
  "shadowPolicyVersion",
] as const;

/** True when a flip is absent or holds what its type says: a string `to`, optional string reason and rule, nothing else. */
function plainFlip(f: unknown): boolean {
  if (f === undefined) return true;
  if (typeof f !== "object" || f === null || Array.isArray(f)) return false;
  const flip = f as Record<string, unknown>;
  return (
    typeof flip["to"] === "string" &&
    (flip["reasonCode"] === undefined || typeof flip["reasonCode"] === "string") &&
    (flip["rule"] === undefined || typeof flip["rule"] === "string") &&
    Object.keys(flip).every((k) => k === "to" || k === "reasonCode" || k === "rule")
  );
}

/** True when the record holds what its type says (a string, or an absent optional one, per field; a finite time): the text below is then auditEntryJson's. */
function plainRecord(r: DecisionRecord): boolean {
  return (
    typeof r.decidedAt === "number" &&
    Number.isFinite(r.decidedAt) &&
    REQUIRED_TEXT.every((k) => typeof r[k] === "string") &&
    OPTIONAL_TEXT.every((k) => r[k] === undefined || typeof r[k] === "string") &&
    (r.runLabels === undefined ||
      (Array.isArray(r.runLabels) && r.runLabels.every((l) => typeof l === "string"))) &&
    plainFlip(r.shadowFlip)
  );
}

/**
 * A decision's audit record as its canonical text: `auditEntryJson` of `decisionAudit(r)` with
 * its seq, byte for byte, written in the keys' fixed UTF-16 order instead of building, sorting and
 * walking the record (a third of the cost). A record holding anything its type does not allow is
 * left to `auditEntryJson`.
 */
export function decisionAuditText(r: DecisionRecord): AuditText {
  if (!plainRecord(r)) return (seq) => auditEntryJson({ ...decisionAudit(r), seq });
  return (seq) => {
    let text = `{"actionId":${quoted(r.actionId)}`;
    if (r.approvalId !== undefined) text += `,"approvalId":${quoted(r.approvalId)}`;
    text += `,"at":${JSON.stringify(r.decidedAt)},"callDigest":${quoted(r.callDigest)},"callId":${quoted(r.callId)}`;
    if (r.caller !== undefined) text += `,"caller":${quoted(r.caller)}`;
    text += `,"catalogVersion":${quoted(r.catalogVersion)},"decision":${quoted(r.decision)},"decisionId":${quoted(r.decisionId)}`;
    text += `,"grantId":${quoted(r.grantId)},"kind":"decision","policyVersion":${quoted(r.policyVersion)}`;
    if (r.reasonCode !== undefined) text += `,"reasonCode":${quoted(r.reasonCode)}`;
    text += `,"rootId":${quoted(r.rootId)}`;
    if (r.rule !== undefined) text += `,"rule":${quoted(r.rule)}`;
    if (r.runId !== undefined) text += `,"runId":${quoted(r.runId)}`;
    if (r.runLabels !== undefined)
      text += `,"runLabels":[${sortedLabels(r.runLabels).map(quoted).join(",")}]`;
    text += `,"seq":${JSON.stringify(seq)}`;
    const flip = r.shadowFlip;
    if (flip !== undefined) {
      text += `,"shadowFlip":{`;
      if (flip.reasonCode !== undefined) text += `"reasonCode":${quoted(flip.reasonCode)},`;
      if (flip.rule !== undefined) text += `"rule":${quoted(flip.rule)},`;
      text += `"to":${quoted(flip.to)}}`;
    }
    if (r.shadowPolicyVersion !== undefined)
      text += `,"shadowPolicyVersion":${quoted(r.shadowPolicyVersion)}`;
    if (r.stepKey !== undefined) text += `,"step":${quoted(r.stepKey)}`;
    return `${text},"subject":${quoted(r.subject)},"toolName":${quoted(r.toolName)}}`;
  };
}

/** The columns `charter replay` reads of a decision (`ReplayRow`), beside its audit seq and inputs. */
export const REPLAY_COLUMNS = [
  "decision_id",
  "decided_at",
  "grant_id",
  "action_id",
  "tool_name",
  "call_id",
  "decision",
  "reason_code",
  "approval_id",
] as const satisfies readonly (keyof DecisionRow)[];

/** A replay page's row as the adapters select it. */
export type ReplayRowColumns = Pick<DecisionRow, (typeof REPLAY_COLUMNS)[number]> & {
  readonly seq: number | string;
  readonly inputs: string | null;
};

/** A replay row read back; an unknown decision or reason code is CORRUPT, as in `decisionRecord`. */
export function replayRow(row: ReplayRowColumns): ReplayRow {
  const id = row.decision_id;
  if (!Object.hasOwn(DECISIONS, row.decision))
    throw new StoreError("CORRUPT", `decision ${id}: unknown decision ${row.decision}`);
  if (row.reason_code !== null && !REASONS.has(row.reason_code))
    throw new StoreError("CORRUPT", `decision ${id}: unknown reason code ${row.reason_code}`);
  return {
    seq: Number(row.seq),
    decisionId: id,
    decidedAt: row.decided_at,
    grantId: row.grant_id,
    actionId: row.action_id,
    toolName: row.tool_name,
    callId: row.call_id,
    decision: row.decision as Decision,
    ...(row.reason_code === null ? {} : { reasonCode: row.reason_code as ReasonCode }),
    ...(row.approval_id === null ? {} : { approvalId: row.approval_id }),
    ...(row.inputs === null ? {} : { inputs: row.inputs }),
  };
}
