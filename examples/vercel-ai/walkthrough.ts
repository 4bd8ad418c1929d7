/**
 * The Vercel AI SDK recipe end to end: the model asks to email someone outside the owner's
 * organisation; Charter holds the call, so `generateText` returns a `tool-approval-request`; the
 * owner approves in Charter (here on her behalf, as `charter approvals approve` would); the app
 * answers the request from Charter's decision and calls `generateText` again; the tool
 * re-authorizes with the approval id and sends the email once.
 *
 *   npm start                                          # in one terminal
 *   npm run example:vercel-ai -- 127.0.0.1:50051       # in another
 *
 * The model is a scripted stand-in (no provider needed); swap in a real one with `model:`.
 */
import { generateText, stepCountIs, type LanguageModel, type ModelMessage } from "ai";
import { createCharterClients } from "../../src/client/index.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { createCharterGate, type CharterGate } from "../gate/charter-gate.js";
import { answerFromCharter, charterTool } from "./charter-tool.js";
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
  readonly approvalRequests: number;
  readonly outbox: readonly SentEmail[];
  readonly finalText: string;
}

export async function walkthrough(
  address: string,
  log: (line: string) => void,
  options: { model?: LanguageModel } = {},
): Promise<WalkthroughResult> {
  const charter = createCharterClients({ address });
  try {
    const { grantToken } = await charter.grants.issueGrant(
      { profile: "owner-assistant", subject: "agent:worker-1", owner: "ana@example.com" },
      { timeoutMs: 5_000 },
    );
    const gate = createCharterGate({ ...charter, grantToken });
    const outbox: SentEmail[] = [];
    const model = options.model ?? scriptedModel({ name: "send_email", args: OUTSIDE_EMAIL }).model;
    const tools = { send_email: sendEmailTool(gate, outbox) };
    const messages: ModelMessage[] = [{ role: "user", content: "Send Bo today's notes." }];

    const first = await generateText({ model, tools, messages, stopWhen: stepCountIs(5) });
    messages.push(...first.response.messages);
    const requests = first.content.filter((p) => p.type === "tool-approval-request");
    log(`approval requested for ${requests.length} call(s), outbox ${outbox.length}`);

    // The owner answers in Charter: her inbox, or `charter approvals approve apr_… --by ana@…`.
    for (const request of requests) {
      const approvalId = gate.heldApproval(request.toolCall.toolCallId) ?? "";
      const { approval } = await charter.approvals.decideApproval({
        approvalId,
        outcome: ApprovalOutcome.APPROVE,
        decidedBy: "ana@example.com",
        note: "",
      });
      log(`${approvalId} approved by ${String(approval?.decidedBy)}`);
    }

    // The app answers the SDK's approval requests from Charter's decisions, then continues.
    const { responses } = await answerFromCharter(gate, first.content, { timeoutMs: 10_000 });
    for (const r of responses) log(`${r.approvalId}: approved ${String(r.approved)} in Charter`);
    messages.push({ role: "tool", content: responses });
    const second = await generateText({ model, tools, messages, stopWhen: stepCountIs(5) });
    log(`continued: ${second.text}`);
    return { approvalRequests: requests.length, outbox, finalText: second.text };
  } finally {
    charter.close();
  }
}

const entry = process.argv[1] ?? "";
if (entry.endsWith("vercel-ai/walkthrough.js")) {
  walkthrough(process.argv[2] ?? "127.0.0.1:50051", console.log).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
