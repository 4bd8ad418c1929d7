import type { DecisionInputs } from "../core/replay.js";
import type { RunView } from "../core/run.js";
import { StoreError } from "../store/port.js";
import type { AdmittedCall } from "./admit.js";
import type { AuthorityContext } from "./context.js";

// A decision's inputs, kept for `charter replay` while `retainDecisionInputsDays` says: sealed
// as the call pipeline commits the decision, opened as replay reads it back.

/**
 * A decision's inputs as `charter replay` reads them (`DecisionInputs`): the parsed arguments and
 * the run the call was decided on, sealed for the store; undefined when none are retained
 * (`retainDecisionInputsDays` 0) or the arguments did not parse (nothing to decide again).
 */
export function retainedInputs(
  ctx: AuthorityContext,
  decisionId: string,
  call: AdmittedCall,
  run: RunView | undefined,
): string | undefined {
  if (ctx.decisionInputs.retainSeconds === 0 || !call.args.ok) return undefined;
  const inputs: DecisionInputs = {
    arguments: call.args.value,
    ...(run === undefined ? {} : { run }),
  };
  return ctx.decisionInputs.sealer.seal(decisionId, JSON.stringify(inputs));
}

/** A decision's retained inputs opened (`charter replay`); text that does not read as inputs is CORRUPT. */
export function openedInputs(
  ctx: AuthorityContext,
  decisionId: string,
  stored: string,
): DecisionInputs {
  const text = ctx.decisionInputs.sealer.open(decisionId, stored);
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === "object" && value !== null && "arguments" in value)
      return value as DecisionInputs;
  } catch {
    // reported below
  }
  throw new StoreError("CORRUPT", `decision ${decisionId}: its retained inputs are malformed`);
}
