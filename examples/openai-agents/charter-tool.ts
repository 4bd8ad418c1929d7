/**
 * A Charter-governed tool for the OpenAI Agents SDK (`@openai/agents`).
 *
 * - `needsApproval` asks Charter (Authorize) about the exact call: allow → no approval step;
 *   require approval → the run is interrupted; deny → no approval step either, and `execute`
 *   answers the model with Charter's reason without running anything.
 * - `resolveFromCharter` resolves the run's interruptions only from Charter: it waits for the
 *   held approval and calls `state.approve` only when Charter approved it, `state.reject` when
 *   Charter rejected, expired or superseded it. The SDK's approve is never the decision.
 * - `execute` authorizes again, with the approval id, right before the effect, and runs the effect
 *   only on DECISION_ALLOW (an approval is used once: the same call again is held anew).
 */
import {
  tool,
  type Agent,
  type FunctionTool,
  type RunState,
  type RunToolApprovalItem,
} from "@openai/agents";
import type { CharterGate, WaitOptions } from "../gate/charter-gate.js";

/** The JSON Schema of a tool's arguments (Charter checks them against the catalog's schema). */
export interface ToolParameters {
  readonly type: "object";
  readonly properties: Record<string, Record<string, unknown>>;
  readonly required: string[];
  readonly additionalProperties: true;
}

/** A tool with a real effect, to be run only when Charter allows the exact call. */
export interface GovernedToolSpec {
  /** The catalog's tool name: what the model calls and what Charter authorizes. */
  readonly name: string;
  readonly description: string;
  readonly parameters: ToolParameters;
  /** The effect; `receipt` is Charter's signed receipt for this call, for the tool service. */
  effect(args: unknown, receipt: string): Promise<string>;
}

/** A function tool whose approval step and effect are both decided by Charter. */
export function charterTool(
  gate: CharterGate,
  spec: GovernedToolSpec,
): FunctionTool<unknown, ToolParameters> {
  return tool({
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    strict: false,
    async needsApproval(_context, args, callId) {
      const answer = await gate.precheck({
        callId: requireCallId(callId),
        toolName: spec.name,
        args,
      });
      return answer.kind === "held";
    },
    async execute(args, _context, details) {
      const callId = requireCallId(details?.toolCall?.callId);
      const outcome = await gate.run({ callId, toolName: spec.name, args }, (receipt) =>
        spec.effect(args, receipt),
      );
      // Nothing ran: the model gets Charter's reason as the tool's result.
      return outcome.ran ? outcome.value : outcome.message;
    },
  });
}

/** What `resolveFromCharter` needs of a run's result (`RunResult` has both). */
export interface InterruptedRun {
  readonly state: Pick<RunState<unknown, Agent>, "approve" | "reject">;
  readonly interruptions: readonly RunToolApprovalItem[];
}

/** How one interruption was resolved. */
export interface Resolution {
  readonly callId: string;
  readonly toolName: string;
  readonly approvalId: string;
  readonly outcome: "approved" | "rejected" | "pending";
}

/**
 * Resolves a run's interruptions from Charter's decisions: approve only what Charter approved,
 * reject (with Charter's reason, for the model) what it refused, and leave pending what it has
 * not decided within the wait's bound. Resume with `run(agent, state)` when none is pending.
 */
export async function resolveFromCharter(
  gate: CharterGate,
  result: InterruptedRun,
  options?: WaitOptions,
): Promise<Resolution[]> {
  const { state } = result;
  const resolutions: Resolution[] = [];
  for (const item of result.interruptions) {
    const callId = "callId" in item.rawItem ? item.rawItem.callId : undefined;
    const toolName = item.name ?? "";
    const approvalId = callId === undefined ? undefined : gate.heldApproval(callId);
    if (callId === undefined || approvalId === undefined) {
      // Not a call Charter holds (another tool's own approval step): Charter cannot approve it.
      state.reject(item, { message: "Charter holds no approval for this call; it did not run." });
      resolutions.push({ callId: callId ?? "", toolName, approvalId: "", outcome: "rejected" });
      continue;
    }
    const answer = await gate.awaitDecision(approvalId, options);
    if (answer.kind === "approved") state.approve(item);
    else if (answer.kind === "refused") {
      state.reject(item, { message: answer.message });
      gate.forget(callId);
    }
    resolutions.push({
      callId,
      toolName,
      approvalId,
      outcome: answer.kind === "refused" ? "rejected" : answer.kind,
    });
  }
  return resolutions;
}

function requireCallId(callId: string | undefined): string {
  if (callId === undefined || callId === "") throw new Error("the SDK gave the tool no call id");
  return callId;
}
