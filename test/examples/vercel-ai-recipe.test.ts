import { generateText, stepCountIs, type ModelMessage } from "ai";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createCharterGate, type CharterGate } from "../../examples/gate/charter-gate.js";
import { answerFromCharter, charterTool } from "../../examples/vercel-ai/charter-tool.js";
import { scriptedModel, type ScriptedModel } from "../../examples/vercel-ai/scripted-model.js";
import {
  OUTSIDE_EMAIL,
  sendEmailTool,
  walkthrough,
  type SentEmail,
} from "../../examples/vercel-ai/walkthrough.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { ApprovalStatus, Decision } from "../../src/gen/charter/v1/common_pb.js";
import { verifyReceipt, type Jwks } from "../../src/token/index.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// A real Charter on port 0 with the demo's catalog and policy, in protected mode (no API keys).
// Its clock is the real one plus `offset` seconds, so a test can let an approval expire.
const clock = { offset: 0 };
const charter: TestCharter = await startTestCharter({
  now: () => Math.floor(Date.now() / 1000) + clock.offset,
});
afterAll(async () => {
  await charter.stop();
});
afterEach(() => {
  clock.offset = 0;
});

const OWNER = "ana@example.com";

/** A task: a fresh grant, its gate, the governed tools, a scripted model and the conversation. */
async function task(scripted: ScriptedModel) {
  const { grantToken } = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:worker-1",
    owner: OWNER,
  });
  const gate = createCharterGate({ ...charter.clients, grantToken });
  const outbox: SentEmail[] = [];
  const shell: string[] = [];
  const tools = { send_email: sendEmailTool(gate, outbox), run_shell: runShellTool(gate, shell) };
  const messages: ModelMessage[] = [];
  /** One `generateText` call with the conversation so far; its messages are kept. */
  async function turn(...add: ModelMessage[]) {
    messages.push(...add);
    const result = await generateText({
      model: scripted.model,
      tools,
      messages,
      stopWhen: stepCountIs(5),
    });
    messages.push(...result.response.messages);
    return result;
  }
  return { grantToken, gate, outbox, shell, turn };
}

function runShellTool(gate: CharterGate, ran: string[]) {
  return charterTool(gate, {
    name: "run_shell",
    description: "Run a shell command.",
    parameters: { type: "object", properties: { command: { type: "string" } } },
    async effect(args) {
      ran.push((args as { command: string }).command);
      return "ran";
    },
  });
}

const user = (content: string): ModelMessage => ({ role: "user", content });

type Turn = Awaited<ReturnType<Awaited<ReturnType<typeof task>>["turn"]>>;

function requestsOf(result: Turn) {
  return result.content.filter((p) => p.type === "tool-approval-request");
}

function heldApproval(gate: CharterGate, result: Turn) {
  const callId = requestsOf(result)[0]?.toolCall.toolCallId ?? "";
  const approvalId = gate.heldApproval(callId);
  if (approvalId === undefined) throw new Error(`no Charter approval held for ${callId}`);
  return approvalId;
}

function decide(approvalId: string, outcome: ApprovalOutcome, note = "") {
  return charter.clients.approvals.decideApproval({ approvalId, outcome, decidedBy: OWNER, note });
}

/** The receipt a tool was given, verified offline against Charter's JWKS. */
async function verifiedReceipt(token: string) {
  const jwks = JSON.parse((await charter.clients.keys.getJwks({})).jwksJson) as Jwks;
  const result = await verifyReceipt(token, jwks, {
    issuer: charter.config.issuer,
    audience: charter.config.audience,
    now: Math.floor(Date.now() / 1000),
  });
  if (!result.ok) throw new Error(`receipt refused: ${result.message}`);
  return result.receipt;
}

async function statusOf(approvalId: string) {
  const { approval } = await charter.clients.approvals.getApproval({ approvalId });
  return approval?.status;
}

describe("examples/vercel-ai recipe", () => {
  it("runs the walkthrough: approval requested, approved in Charter, continued, sent once", async () => {
    const lines: string[] = [];
    const result = await walkthrough(`127.0.0.1:${charter.server.port}`, (l) => lines.push(l));
    expect(result.approvalRequests).toBe(1);
    expect(result.outbox.map((e) => e.to)).toEqual([OUTSIDE_EMAIL.to]);
    expect(result.finalText).toMatch(/^send_email answered: sent to bo@partner\.example\.org/);
    expect(lines).toContain("approval requested for 1 call(s), outbox 0");
  });

  it("runs a held call only after Charter approves it, once; the same call again is held anew", async () => {
    const scripted = scriptedModel({ name: "send_email", args: OUTSIDE_EMAIL });
    const { grantToken, gate, outbox, turn } = await task(scripted);

    const first = await turn(user("Send Bo the notes."));
    expect(requestsOf(first).map((r) => r.toolCall.toolName)).toEqual(["send_email"]);
    expect(outbox).toEqual([]);
    const approvalId = heldApproval(gate, first);
    expect(await statusOf(approvalId)).toBe(ApprovalStatus.PENDING);

    // Undecided in Charter: no approval response is written, whatever the wait.
    const waiting = await answerFromCharter(gate, first.content, { timeoutMs: 300, pollMs: 50 });
    expect(waiting.responses).toEqual([]);
    expect(waiting.pending).toEqual([requestsOf(first)[0]?.approvalId]);

    // The owner approves in Charter while the app waits for the decision.
    const answering = answerFromCharter(gate, first.content, { timeoutMs: 10_000, pollMs: 50 });
    await new Promise((r) => setTimeout(r, 150));
    const { approval } = await decide(approvalId, ApprovalOutcome.APPROVE);
    expect(approval?.decidedBy).toBe(OWNER);
    const { responses } = await answering;
    expect(responses.map((r) => r.approved)).toEqual([true]);
    expect(outbox).toEqual([]);

    const second = await turn({ role: "tool", content: responses });
    expect(requestsOf(second)).toEqual([]);
    expect(outbox.map((e) => e.to)).toEqual([OUTSIDE_EMAIL.to]);
    expect(scripted.seen).toEqual([expect.stringMatching(/^sent to bo@partner\.example\.org/)]);
    expect(await statusOf(approvalId)).toBe(ApprovalStatus.CONSUMED);
    // The effect got the receipt of the re-authorized call: this call, these arguments.
    const receipt = await verifiedReceipt(outbox[0]?.receipt ?? "");
    const { approval: used } = await charter.clients.approvals.getApproval({ approvalId });
    expect(receipt.toolName).toBe("send_email");
    expect(receipt.callId).toBe(requestsOf(first)[0]?.toolCall.toolCallId);
    expect(receipt.argsDigest).toBe(used?.callDigest);

    // The approval was used: presenting it again is refused, and the model asking again is held.
    const { verdict } = await charter.clients.authority.authorize({
      grantToken,
      call: {
        callId: "again",
        toolName: "send_email",
        argumentsJson: JSON.stringify(OUTSIDE_EMAIL),
      },
      approvalId,
    });
    expect(verdict?.decision).toBe(Decision.DENY);
    expect(verdict?.reason?.code).toBe("APPROVAL_CONSUMED");
    scripted.plan({ name: "send_email", args: OUTSIDE_EMAIL });
    const third = await turn(user("Send it again."));
    expect(requestsOf(third)).toHaveLength(1);
    const nextApproval = heldApproval(gate, third);
    expect(nextApproval).not.toBe(approvalId);
    expect(await statusOf(nextApproval)).toBe(ApprovalStatus.PENDING);
    expect(outbox.map((e) => e.to)).toEqual([OUTSIDE_EMAIL.to]);
  });

  it("runs nothing when only the framework approves: execute asks Charter again", async () => {
    const scripted = scriptedModel({ name: "send_email", args: OUTSIDE_EMAIL });
    const { gate, outbox, turn } = await task(scripted);
    const first = await turn(user("Send Bo the notes."));
    const approvalId = heldApproval(gate, first);

    // An app that answers the SDK's request itself, without asking Charter.
    await turn({
      role: "tool",
      content: requestsOf(first).map((r) => ({
        type: "tool-approval-response" as const,
        approvalId: r.approvalId,
        approved: true,
      })),
    });
    expect(outbox).toEqual([]);
    expect(scripted.seen).toEqual([
      "This call is held for the owner's approval in Charter; it did not run.",
    ]);
    expect(await statusOf(approvalId)).toBe(ApprovalStatus.PENDING);
  });

  it("denies the tool call in the SDK when the owner rejects it in Charter", async () => {
    const scripted = scriptedModel({ name: "send_email", args: OUTSIDE_EMAIL });
    const { gate, outbox, turn } = await task(scripted);
    const first = await turn(user("Send Bo the notes."));
    const approvalId = heldApproval(gate, first);
    await decide(approvalId, ApprovalOutcome.REJECT, "not to partners");

    const { responses } = await answerFromCharter(gate, first.content, { timeoutMs: 5_000 });
    expect(responses.map((r) => [r.approved, r.reason])).toEqual([
      [false, "The owner rejected this call in Charter: not to partners."],
    ]);
    await turn({ role: "tool", content: responses });
    expect(outbox).toEqual([]);
    expect(scripted.seen).toEqual(["The owner rejected this call in Charter: not to partners."]);
    expect(await statusOf(approvalId)).toBe(ApprovalStatus.REJECTED);
  });

  it("denies the tool call in the SDK when the approval expires in Charter", async () => {
    const scripted = scriptedModel({ name: "send_email", args: OUTSIDE_EMAIL });
    const { gate, outbox, turn } = await task(scripted);
    const first = await turn(user("Send Bo the notes."));
    const approvalId = heldApproval(gate, first);
    clock.offset = charter.config.approvalTtlSeconds + 1;

    const { responses } = await answerFromCharter(gate, first.content, { timeoutMs: 5_000 });
    expect(responses.map((r) => r.approved)).toEqual([false]);
    await turn({ role: "tool", content: responses });
    expect(outbox).toEqual([]);
    expect(scripted.seen).toEqual([
      "The approval for this call expired in Charter before a decision.",
    ]);
    expect(await statusOf(approvalId)).toBe(ApprovalStatus.EXPIRED);
  });

  it("does not run a denied call, and the model gets Charter's reason", async () => {
    const scripted = scriptedModel({ name: "run_shell", args: { command: "ls" } });
    const { grantToken, shell, turn } = await task(scripted);
    const result = await turn(user("List the files."));
    expect(requestsOf(result)).toEqual([]);
    expect(shell).toEqual([]);

    const { verdict } = await charter.clients.authority.authorize({
      grantToken,
      call: { callId: "probe", toolName: "run_shell", argumentsJson: '{"command":"ls"}' },
    });
    expect(verdict?.reason?.code).toBe("EXPLICIT_DENY");
    expect(scripted.seen).toEqual([verdict?.reason?.message]);
  });
});
