import type { Database } from "better-sqlite3";
import { DECISION_COLUMNS, decisionAuditText, decisionRecord, decisionRow, recommitOutcome, type DecisionRow } from "../decision-row.js";
import type { CommitOutcome, CommitRefusalCode, DecisionEffects, DecisionRecord, DecisionStore, StepStore } from "../port.js";
import { heldStep, replacesHeld, selectStepSql, STEP_COLUMNS, stepRow, type HeldStepRow } from "../step-row.js";
import type { ConsumeApproval } from "./approvals.js";
import type { AuditAppend } from "./audit.js";
import type { ChargeBudget } from "./budgets.js";
import type { GroupCommit, GroupUnit } from "./group-commit.js";

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

/** A decision row's values in DECISION_COLUMNS order. */
type DecisionValues = ValuesOf<typeof DECISION_COLUMNS>;
type ValuesOf<C extends readonly (keyof DecisionRow)[]> = { -readonly [I in keyof C]: DecisionRow[C[I]] };

/** Thrown inside the effects' savepoint to roll back what was consumed so far; never leaves the adapter. */
class Refusal extends Error {
  constructor(
    readonly reasonCode: CommitRefusalCode,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/**
 * The decision half of the SQLite store. A commit is one unit of work of the group commit: the
 * allow's effects (approval consumption, then every budget counter; a refusal undoes them all —
 * a savepoint the consumption, `sqliteBudgets` its own charges — and the record is written as a
 * deny with the refusal's code), the decision row and its audit record. Budget charges alone
 * write no row inside the unit (the group writes its counters before it commits), so an allow
 * with a budget and no approval takes no savepoint of its own.
 * Errors are left raw for the caller (openSqliteStore) to translate.
 */
export function sqliteDecisionStore(db: Database, deps: DecisionDeps): DecisionStore & StepStore {
  // Bound by position, in DECISION_COLUMNS order: 17 named parameters cost 1.4 µs more to bind.
  const insert = db.prepare<DecisionValues, never>(`
    INSERT INTO decisions (${DECISION_COLUMNS.join(", ")})
    VALUES (${DECISION_COLUMNS.map(() => "?").join(", ")})`);
  const insertRow = (r: DecisionRow) =>
    insert.run(
      r.decision_id,
      r.decided_at,
      r.grant_id,
      r.root_id,
      r.subject,
      r.action_id,
      r.tool_name,
      r.call_id,
      r.call_digest,
      r.decision,
      r.reason_code,
      r.approval_id,
      r.catalog_version,
      r.policy_version,
      r.caller,
      r.run_id,
      r.step_key,
    );
  const select = db.prepare<[string], DecisionRow>(`SELECT ${DECISION_COLUMNS.join(", ")} FROM decisions WHERE decision_id = ?`);
  const selectStep = db.prepare<[string, string, string], HeldStepRow>(selectStepSql(() => "?"));
  // A replaceable held step (a require_approval superseded by the approved call) is overwritten in place.
  const putStep = db.prepare<[Record<string, string | null>], never>(`
    INSERT INTO decision_steps (${STEP_COLUMNS.join(", ")}) VALUES (${STEP_COLUMNS.map((c) => `@${c}`).join(", ")})
    ON CONFLICT (grant_id, run_id, step_key) DO UPDATE SET
      ${STEP_COLUMNS.slice(3)
        .map((c) => `${c} = excluded.${c}`)
        .join(", ")}`);

  const effectsOf = db.transaction((record: DecisionRecord, effects: DecisionEffects, unit: GroupUnit) => {
    if (effects.approval) {
      const problem = deps.consume(effects.approval.approvalId, effects.approval.callDigest, record.decidedAt);
      if (problem === "expired") throw new Refusal("APPROVAL_EXPIRED", `approval ${effects.approval.approvalId} expired`);
      if (problem !== undefined) throw new Refusal("APPROVAL_CONSUMED", `approval ${effects.approval.approvalId} is ${problem}`);
    }
    if (effects.budget) {
      const spent = deps.charge(effects.budget, unit);
      if (spent !== undefined) throw new Refusal("LIMIT_EXCEEDED", spent);
    }
  });

  const commit = (record: DecisionRecord, effects: DecisionEffects, unit: GroupUnit): CommitOutcome => {
    const row = decisionRow(record);
    const stored = select.get(row.decision_id);
    if (stored !== undefined) return recommitOutcome(stored, row);
    // The step first: a step decided already (by a concurrent retry, or another process on the file) is answered, not decided again.
    const slot = effects.step;
    const heldRow = slot === undefined ? undefined : selectStep.get(record.grantId, slot.runId, slot.stepKey);
    if (slot !== undefined && heldRow !== undefined) {
      const held = heldStep(heldRow);
      if (!replacesHeld(held, slot, record)) return { kind: "step_held", held };
    }
    let outcome: CommitOutcome = { kind: "committed" };
    let written = row;
    let audited = record;
    if (record.decision === "allow" && (effects.approval || effects.budget)) {
      let refusal: { readonly reasonCode: CommitRefusalCode; readonly detail: string } | undefined;
      if (effects.approval) {
        try {
          effectsOf(record, effects, unit);
        } catch (err) {
          if (!(err instanceof Refusal)) throw err;
          refusal = err;
        }
      } else if (effects.budget) {
        // Budgets alone write nothing in the unit (charged in the group's memory; a refusal gives
        // back its own charges): no savepoint to undo.
        const spent = deps.charge(effects.budget, unit);
        if (spent !== undefined) refusal = { reasonCode: "LIMIT_EXCEEDED", detail: spent };
      }
      if (refusal !== undefined) {
        outcome = { kind: "refused", reasonCode: refusal.reasonCode, detail: refusal.detail };
        if (refusal.reasonCode === "APPROVAL_EXPIRED") deps.expireDue(record.decidedAt);
        written = { ...row, decision: "deny", reason_code: refusal.reasonCode };
        audited = { ...record, decision: "deny", reasonCode: refusal.reasonCode };
      }
    }
    insertRow(written);
    if (slot !== undefined) putStep.run(stepRow(record, slot, written));
    deps.append(decisionAuditText(audited));
    return outcome;
  };

  return {
    commitDecision: (record, effects = {}) => deps.group.run((unit) => commit(record, effects, unit)),
    async getDecision(decisionId) {
      const row = select.get(decisionId);
      return row === undefined ? undefined : decisionRecord(row);
    },
    getBudgetUsage: deps.usage,
    async getStep(grantId, runId, stepKey) {
      const row = selectStep.get(grantId, runId, stepKey);
      return row === undefined ? undefined : heldStep(row);
    },
  };
}
