import type { Database } from "better-sqlite3";
import { REASON_CODES, type Decision, type ReasonCode } from "../../core/verdict.js";
import { StoreError, type CommitOutcome, type CommitRefusalCode, type DecisionEffects, type DecisionRecord, type DecisionStore } from "../port.js";
import type { ConsumeApproval } from "./approvals.js";
import type { AuditAppend } from "./audit.js";
import type { ChargeBudget } from "./budgets.js";
import type { GroupCommit } from "./group-commit.js";

/** A row of the `decisions` table; absent optional fields are NULL. */
interface DecisionRow {
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
}

const COLUMNS = [
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
] as const satisfies readonly (keyof DecisionRow)[];

/** Every decision this version knows; a new one in the core fails compilation here until it is listed. */
const DECISIONS: Readonly<Record<Decision, true>> = { allow: true, deny: true, require_approval: true, effect_suppressed: true };
const REASONS: ReadonlySet<string> = new Set(REASON_CODES);

/** What the decision half needs from the rest of the adapter: the group commit, the chain, approvals and budgets. */
export interface DecisionDeps {
  readonly group: GroupCommit;
  readonly append: AuditAppend;
  readonly consume: ConsumeApproval;
  /** Marks approvals whose time ran out expired (inside the unit of work). */
  readonly expireDue: (now: number) => number;
  readonly charge: ChargeBudget;
  readonly usage: DecisionStore["getBudgetUsage"];
}

/** Thrown inside the effects' savepoint to roll back what was charged so far; never leaves the adapter. */
class Refusal extends Error {
  constructor(
    readonly reasonCode: CommitRefusalCode,
    readonly detail: string,
  ) {
    super(detail);
  }
}

const REFUSALS: ReadonlySet<string> = new Set<CommitRefusalCode>(["LIMIT_EXCEEDED", "APPROVAL_CONSUMED", "APPROVAL_EXPIRED"]);

/**
 * The decision half of the SQLite store. A commit is one unit of work of the group commit: the
 * allow's effects in a savepoint (approval consumption, then every budget counter; a refusal rolls
 * them all back and the record is written as a deny with the refusal's code), the decision row
 * and its audit record. Errors are left raw for the caller (openSqliteStore) to translate.
 */
export function sqliteDecisionStore(db: Database, deps: DecisionDeps): DecisionStore {
  const insert = db.prepare<[DecisionRow], never>(`
    INSERT INTO decisions (${COLUMNS.join(", ")})
    VALUES (${COLUMNS.map((c) => `@${c}`).join(", ")})`);
  const select = db.prepare<[string], DecisionRow>(`SELECT ${COLUMNS.join(", ")} FROM decisions WHERE decision_id = ?`);

  const effectsOf = db.transaction((record: DecisionRecord, effects: DecisionEffects) => {
    if (effects.approval) {
      const problem = deps.consume(effects.approval.approvalId, effects.approval.callDigest, record.decidedAt);
      if (problem === "expired") throw new Refusal("APPROVAL_EXPIRED", `approval ${effects.approval.approvalId} expired`);
      if (problem !== undefined) throw new Refusal("APPROVAL_CONSUMED", `approval ${effects.approval.approvalId} is ${problem}`);
    }
    if (effects.budget) {
      const spent = deps.charge(effects.budget);
      if (spent !== undefined) throw new Refusal("LIMIT_EXCEEDED", spent);
    }
  });

  const commit = (record: DecisionRecord, effects: DecisionEffects): CommitOutcome => {
    const row = decisionRow(record);
    const stored = select.get(row.decision_id);
    if (stored !== undefined) return again(stored, row);
    let outcome: CommitOutcome = { kind: "committed" };
    let written = row;
    if (record.decision === "allow" && (effects.approval || effects.budget)) {
      try {
        effectsOf(record, effects);
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        outcome = { kind: "refused", reasonCode: err.reasonCode, detail: err.detail };
        if (err.reasonCode === "APPROVAL_EXPIRED") deps.expireDue(record.decidedAt);
        written = { ...row, decision: "deny", reason_code: err.reasonCode };
      }
    }
    insert.run(written);
    deps.append(auditOf(decisionRecord(written)));
    return outcome;
  };

  return {
    commitDecision: (record, effects = {}) => deps.group.run(() => commit(record, effects)),
    async getDecision(decisionId) {
      const row = select.get(decisionId);
      return row === undefined ? undefined : decisionRecord(row);
    },
    getBudgetUsage: deps.usage,
  };
}

/** The same decision committed again: the first outcome; other content under its id is a CONFLICT. */
function again(stored: DecisionRow, row: DecisionRow): CommitOutcome {
  if (COLUMNS.every((c) => stored[c] === row[c])) return { kind: "committed" };
  const refused = row.decision === "allow" && stored.decision === "deny" && stored.reason_code !== null && REFUSALS.has(stored.reason_code);
  if (refused && COLUMNS.every((c) => c === "decision" || c === "reason_code" || stored[c] === row[c])) {
    return { kind: "refused", reasonCode: stored.reason_code as CommitRefusalCode, detail: "refused when first committed" };
  }
  throw new StoreError("CONFLICT", `decision ${row.decision_id} is recorded already with other content`);
}

/** A decision's audit record: the same fields, never argument values or tokens. */
function auditOf(r: DecisionRecord) {
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
  };
}

function decisionRow(r: DecisionRecord): DecisionRow {
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
  };
}

/** Reads a row back; one this version cannot read (an unknown decision or reason code) is CORRUPT. */
function decisionRecord(row: DecisionRow): DecisionRecord {
  const id = row.decision_id;
  if (!Object.hasOwn(DECISIONS, row.decision)) throw new StoreError("CORRUPT", `decision ${id}: unknown decision ${row.decision}`);
  if (row.reason_code !== null && !REASONS.has(row.reason_code)) {
    throw new StoreError("CORRUPT", `decision ${id}: unknown reason code ${row.reason_code}`);
  }
  if (!Number.isSafeInteger(row.decided_at)) throw new StoreError("CORRUPT", `decision ${id}: decided_at is not a time`);
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
  };
}
