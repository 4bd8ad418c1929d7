/**
 * A Charter-governed tool for the Vercel AI SDK (`ai` v6) tool execution approval.
 *
 * - `needsApproval` asks Charter (Authorize) about the exact call: only a held call makes the SDK
 *   return a `tool-approval-request`; allowed and denied calls go straight to `execute`.
 * - `answerFromCharter` writes the `tool-approval-response` parts from Charter's approval status:
 *   `approved: true` only when Charter approved the held call, `approved: false` (with Charter's
 *   reason, which the model sees) when it rejected, expired or superseded it. The SDK's approval
 *   response is never the decision.
 * - `execute` authorizes again, with the approval id, right before the effect, and runs it only on
 *   DECISION_ALLOW; otherwise it returns Charter's reason to the model and nothing runs.
 */
import {
  jsonSchema,
  tool,
  type JSONSchema7,
  type Tool,
  type ToolApprovalResponse,
  type ToolSet,
  type TypedToolCall,
} from "ai";
import type { CharterGate, WaitOptions } from "../gate/charter-gate.js";

/** A tool with a real effect, to be run only when Charter allows the exact call. */
export interface GovernedToolSpec {
  /** The catalog's tool name: the key in `tools`, what Charter authorizes. */
  readonly name: string;
  readonly description: string;
  /** The JSON Schema of its arguments (Charter checks them against the catalog's schema). */
  readonly parameters: JSONSchema7;
  /** The effect; `receipt` is Charter's signed receipt for this call, for the tool service. */
  effect(args: unknown, receipt: string): Promise<string>;
}

/** A tool whose approval step and effect are both decided by Charter. */
export function charterTool(gate: CharterGate, spec: GovernedToolSpec): Tool<unknown, string> {
  return tool<unknown, string>({
    description: spec.description,
    inputSchema: jsonSchema(spec.parameters),
    async needsApproval(args, { toolCallId }) {
      const answer = await gate.precheck({ callId: toolCallId, toolName: spec.name, args });
      return answer.kind === "held";
    },
    async execute(args, { toolCallId }) {
      const outcome = await gate.run({ callId: toolCallId, toolName: spec.name, args }, (receipt) =>
        spec.effect(args, receipt),
      );
      // Nothing ran: the model gets Charter's reason as the tool's result.
      return outcome.ran ? outcome.value : outcome.message;
    },
  });
}

/** The part of a `generateText` result's content this needs: its approval requests. */
export interface ApprovalRequestPart {
  readonly type: string;
  readonly approvalId?: string;
  readonly toolCall?: Pick<TypedToolCall<ToolSet>, "toolCallId" | "toolName">;
}

/** The approval responses Charter's decisions give, and the requests it has not decided yet. */
export interface CharterAnswers {
  readonly responses: ToolApprovalResponse[];
  readonly pending: string[];
}

/**
 * Answers a result's `tool-approval-request` parts from Charter: wait (bounded) for each held
 * call's approval, approve only what Charter approved, deny what it refused. Push the responses
 * as a `tool` message and call `generateText` again; undecided requests are left for later.
 */
export async function answerFromCharter(
  gate: CharterGate,
  content: readonly ApprovalRequestPart[],
  options?: WaitOptions,
): Promise<CharterAnswers> {
  const responses: ToolApprovalResponse[] = [];
  const pending: string[] = [];
  for (const part of content) {
    if (part.type !== "tool-approval-request" || part.approvalId === undefined) continue;
    const callId = part.toolCall?.toolCallId ?? "";
    const held = gate.heldApproval(callId);
    if (held === undefined) {
      // Not a call Charter holds (another tool's own approval step): Charter cannot approve it.
      responses.push(
        deny(part.approvalId, "Charter holds no approval for this call; it did not run."),
      );
      continue;
    }
    const answer = await gate.awaitDecision(held, options);
    if (answer.kind === "pending") pending.push(part.approvalId);
    else if (answer.kind === "approved")
      responses.push({
        type: "tool-approval-response",
        approvalId: part.approvalId,
        approved: true,
        reason: `approved in Charter (${held})`,
      });
    else {
      responses.push(deny(part.approvalId, answer.message));
      gate.forget(callId);
    }
  }
  return { responses, pending };
}

function deny(approvalId: string, reason: string): ToolApprovalResponse {
  return { type: "tool-approval-response", approvalId, approved: false, reason };
}
