import { REASON_CODES, type Decision, type ReasonCode } from "../core/verdict.js";
import type { DecisionRow } from "./decision-row.js";
import { StoreError, type DecisionRecord, type HeldStep, type StepSlot } from "./port.js";

/** A row of the `decision_steps` table joined with its decision's committed outcome, as every adapter reads it. */
export interface HeldStepRow {
  readonly decision_id: string;
  readonly fingerprint: string;
  readonly verdict_json: string;
  readonly receipt: string | null;
  readonly decision: string;
  readonly reason_code: string | null;
}

/** The columns every adapter writes to `decision_steps`, in this order. */
export const STEP_COLUMNS = [
  "grant_id",
  "run_id",
  "step_key",
  "fingerprint",
  "decision_id",
  "verdict_json",
  "receipt",
] as const;

const DECISIONS: ReadonlySet<string> = new Set<Decision>([
  "allow",
  "deny",
  "require_approval",
  "effect_suppressed",
]);
const REASONS: ReadonlySet<string> = new Set(REASON_CODES);

export function heldStep(row: HeldStepRow): HeldStep {
  if (!DECISIONS.has(row.decision) || (row.reason_code !== null && !REASONS.has(row.reason_code))) {
    throw new StoreError(
      "CORRUPT",
      `step of decision ${row.decision_id}: unknown decision or reason code`,
    );
  }
  return {
    decisionId: row.decision_id,
    fingerprint: row.fingerprint,
    verdictJson: row.verdict_json,
    decision: row.decision as Decision,
    ...(row.receipt === null ? {} : { receipt: row.receipt }),
    ...(row.reason_code === null ? {} : { reasonCode: row.reason_code as ReasonCode }),
  };
}

/**
 * Whether a decision may take a step that is held already: only a decision made with an approval
 * presented, and not itself require_approval, replaces a held require_approval (the approval's
 * consumption is once, so this never lets a step's effect happen twice). Anything else leaves the
 * held decision standing and writes nothing.
 */
export function replacesHeld(held: HeldStep, slot: StepSlot, record: DecisionRecord): boolean {
  return (
    held.decision === "require_approval" &&
    slot.supersedesPending === true &&
    record.decision !== "require_approval"
  );
}

/** The step row a decision writes, as written (the receipt only when the record commits as an allow). */
export function stepRow(
  record: DecisionRecord,
  slot: StepSlot,
  written: DecisionRow,
): Record<(typeof STEP_COLUMNS)[number], string | null> {
  return {
    grant_id: record.grantId,
    run_id: slot.runId,
    step_key: slot.stepKey,
    fingerprint: slot.fingerprint,
    decision_id: record.decisionId,
    verdict_json: slot.verdictJson,
    receipt: written.decision === "allow" ? (slot.receipt ?? null) : null,
  };
}

/** The select of a held step with its decision's outcome; `$n`/`?` placeholders per adapter. */
export function selectStepSql(p: (n: number) => string): string {
  return `SELECT s.decision_id, s.fingerprint, s.verdict_json, s.receipt, d.decision, d.reason_code
    FROM decision_steps s JOIN decisions d ON d.decision_id = s.decision_id
    WHERE s.grant_id = ${p(1)} AND s.run_id = ${p(2)} AND s.step_key = ${p(3)}`;
}
