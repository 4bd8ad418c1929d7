/**
 * The OpenAI Agents SDK recipe end to end: an agent asks to email someone outside the owner's
 * organisation; Charter holds the call for the owner's approval, so the run is interrupted; the
 * owner approves in Charter (here on her behalf, as `charter approvals approve` would); the app
 * resolves the interruption from Charter's decision and resumes; the tool re-authorizes with the
 * approval id and sends the email once.
 *
 *   npm start                                             # in one terminal
 *   npm run example:openai-agents -- 127.0.0.1:50051      # in another
 *
 * The model is a scripted stand-in (no provider needed); swap in a real one with `model:`.
 */
import { Agent, Runner, type Model } from "@openai/agents";
import { createCharterClients } from "../../src/client/index.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { createCharterGate, type CharterGate } from "../gate/charter-gate.js";
import { charterTool, resolveFromCharter } from "./charter-tool.js";
import { scriptedModel } from "./scripted-model.js";

/** An email the tool sent, with Charter's receipt for the call that sent it. */
export interface SentEmail {
  readonly to: string;
  readonly receipt: string;
}

/** The email tool, governed by Charter; `outbox` is its effect, for a test to see. */
export function sendEmailTool(gate: CharterGate, outbox: SentEmail[]) {
  return charterTool(gate, {
    name: "send_email",
    description: "Send an email from the owner's address to exactly one recipient.",
    parameters: {
      type: "object",
      properties: {
        to: { type: "string", description: "The single recipient." },
        subject: { type: "string" },
        body: { type: "string" },
      },
      required: ["to", "subject", "body"],
      additionalProperties: true,
    },
    async effect(args, receipt) {
      const { to } = args as { to: string };
      outbox.push({ to, receipt });
      return `sent to ${to} (receipt ${receipt.slice(0, 12)}…)`;
    },
  });
}

export const OUTSIDE_EMAIL = {
  to: "bo@partner.example.org",
  subject: "Notes",
  body: "Hi Bo, the notes from today.",
};

export interface WalkthroughResult {
  readonly interrupted: number;
  readonly outbox: readonly SentEmail[];
  readonly finalOutput: string;
}

export async function walkthrough(
  address: string,
  log: (line: string) => void,
  options: { model?: Model } = {},
): Promise<WalkthroughResult> {
  const charter = createCharterClients({ address });
  try {
    const { grantToken } = await charter.grants.issueGrant(
      { profile: "owner-assistant", subject: "agent:worker-1", owner: "ana@example.com" },
      { timeoutMs: 5_000 },
    );
    const gate = createCharterGate({ ...charter, grantToken });
    const outbox: SentEmail[] = [];
    const agent = new Agent({
      name: "assistant",
      instructions: "You are Ana's assistant.",
      model: options.model ?? scriptedModel({ name: "send_email", args: OUTSIDE_EMAIL }),
      tools: [sendEmailTool(gate, outbox)],
    });
    const runner = new Runner({ tracingDisabled: true });

    const first = await runner.run(agent, "Send Bo today's notes.");
    // `interruptions` reads the run's state, which resuming changes: keep the count now.
    const interrupted = first.interruptions.length;
    log(`run interrupted: ${interrupted} call(s) held, outbox ${outbox.length}`);

    // The owner answers in Charter: her inbox, or `charter approvals approve apr_… --by ana@…`.
    for (const item of first.interruptions) {
      const callId = "callId" in item.rawItem ? item.rawItem.callId : "";
      const approvalId = gate.heldApproval(callId) ?? "";
      const { approval } = await charter.approvals.decideApproval({
        approvalId,
        outcome: ApprovalOutcome.APPROVE,
        decidedBy: "ana@example.com",
        note: "",
      });
      log(`${approvalId} approved by ${String(approval?.decidedBy)}`);
    }

    // The app resolves the interruptions from Charter's decisions, then resumes the run.
    const resolutions = await resolveFromCharter(gate, first, { timeoutMs: 10_000 });
    for (const r of resolutions) log(`${r.toolName} ${r.callId}: ${r.outcome} in Charter`);
    const resumed = await runner.run(agent, first.state);
    const finalOutput = resumed.finalOutput ?? "";
    log(`resumed: ${finalOutput}`);
    return { interrupted, outbox, finalOutput };
  } finally {
    charter.close();
  }
}

const entry = process.argv[1] ?? "";
if (entry.endsWith("openai-agents/walkthrough.js")) {
  walkthrough(process.argv[2] ?? "127.0.0.1:50051", console.log).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
