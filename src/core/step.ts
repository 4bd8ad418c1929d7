import { canonicalJson, sha256Hex } from "./digest.js";
import type { Target } from "./target.js";

/**
 * Where a call sits in its run: the tool call id of an agent's model turn, or attempt `attempt`
 * of a graph node's activation (a recovered activation that replays its operation is a new
 * attempt, so a new step). A grant, a run and a step name one decision.
 */
export type Step =
  | { readonly runId: string; readonly toolCallId: string }
  | { readonly runId: string; readonly activationId: string; readonly attempt: number };

/** Longest run id, tool call id or activation id a step may carry (characters). */
export const MAX_STEP_ID_LENGTH = 256;

/** What is wrong with a step, naming the field (relative to the step), or undefined when it is usable. */
export function stepProblem(
  step: Step,
): { readonly field: string; readonly message: string } | undefined {
  const id = (field: string, value: string) =>
    value === ""
      ? { field, message: "is required" }
      : value.length > MAX_STEP_ID_LENGTH
        ? { field, message: `is longer than ${MAX_STEP_ID_LENGTH} characters` }
        : undefined;
  const run = id("run_id", step.runId);
  if (run) return run;
  if ("toolCallId" in step) return id("tool_call_id", step.toolCallId);
  const activation = id("activation.activation_id", step.activationId);
  if (activation) return activation;
  return Number.isSafeInteger(step.attempt) && step.attempt >= 1
    ? undefined
    : { field: "activation.attempt", message: "must be 1 or more" };
}

/** The step's key within its run, as stored: canonical JSON, so two steps are the same exactly when their keys are equal. */
export function stepKey(step: Step): string {
  return "toolCallId" in step
    ? canonicalJson(["tool_call", step.toolCallId])
    : canonicalJson(["activation", step.activationId, step.attempt]);
}

/** What a step was asked: the names as sent, the arguments (their parsed value, or the text when it did not parse) and the target. */
export interface StepAsked {
  readonly toolName: string;
  readonly actionId: string;
  readonly arguments:
    { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly text: string };
  readonly target?: Target;
}

/**
 * The fingerprint a step's decision is held under: sha256 over the canonical JSON of what was
 * asked. The same step asked with an equal fingerprint is a retry and answers the held verdict;
 * any other fingerprint is a different call under a step already decided (STEP_CONFLICT).
 * Arguments compare by value (key order and number spelling do not matter); an approval id is
 * not part of it (retrying with the approval is the same call).
 */
export function stepFingerprint(asked: StepAsked): string {
  const args = asked.arguments.ok
    ? { value: asked.arguments.value }
    : { text: asked.arguments.text };
  return sha256Hex(
    canonicalJson({
      toolName: asked.toolName,
      actionId: asked.actionId,
      arguments: args,
      target: asked.target ?? { kind: "tool" },
    }),
  );
}
