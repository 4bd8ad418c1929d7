import type { Decision, ReasonCode } from "../core/verdict.js";

/**
 * The step a decision claims: (grant, run, step) names one decision. Claimed by every decision
 * that carries a step, whatever it decides, in the same unit of work as its record.
 */
export interface StepSlot {
  readonly runId: string;
  /** `stepKey(step)`: canonical JSON of the tool call id, or of the activation and attempt. */
  readonly stepKey: string;
  /** `stepFingerprint(...)` of what was asked; a retry asks with the same one. */
  readonly fingerprint: string;
  /** The verdict as decided (before the commit's effects), as JSON text: what a retry is answered. */
  readonly verdictJson: string;
  /** The receipt signed for an allow; kept only when the allow commits. */
  readonly receipt?: string;
  /**
   * The call presents an approval: when the step holds a require_approval, this decision (if it
   * is not require_approval again) replaces it. Otherwise a held step is never replaced.
   */
  readonly supersedesPending?: boolean;
}

/** What a step holds: the decision that claimed it, and that decision as committed. */
export interface HeldStep {
  readonly decisionId: string;
  readonly fingerprint: string;
  readonly verdictJson: string;
  readonly receipt?: string;
  /** The decision as committed (a refused allow reads back as deny, with the refusal's code). */
  readonly decision: Decision;
  readonly reasonCode?: ReasonCode;
}

/** The step index of the decisions. */
export interface StepStore {
  /** The decision a grant's run holds for a step, or undefined when the step is not decided yet. */
  getStep(grantId: string, runId: string, stepKey: string): Promise<HeldStep | undefined>;
}
