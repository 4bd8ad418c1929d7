import { Agent, Runner } from "@openai/agents";
import { afterAll, describe, expect, it } from "vitest";
import { createCharterGate, type CharterGate } from "../../examples/gate/charter-gate.js";
import { charterTool, resolveFromCharter } from "../../examples/openai-agents/charter-tool.js";
import { scriptedModel, type ScriptedModel } from "../../examples/openai-agents/scripted-model.js";
import {
  OUTSIDE_EMAIL,
  sendEmailTool,
  walkthrough,
  type SentEmail,
} from "../../examples/openai-agents/walkthrough.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { ApprovalStatus, Decision } from "../../src/gen/charter/v1/common_pb.js";
import { verifyReceipt, type Jwks } from "../../src/token/index.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// A real Charter on port 0 with the demo's catalog and policy, in protected mode (no API keys).
const charter: TestCharter = await startTestCharter();
afterAll(async () => {
  await charter.stop();
});

const runner = new Runner({ tracingDisabled: true });
const OWNER = "ana@example.com";

/** A task: a fresh grant, its gate, an agent with the governed tools and a scripted model. */
async function task(model: ScriptedModel) {
  const { grantToken, grant } = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:worker-1",
    owner: OWNER,
  });
  const gate = createCharterGate({ ...charter.clients, grantToken });
  const outbox: SentEmail[] = [];
  const shell: string[] = [];
  const agent = new Agent({
    name: "assistant",
    instructions: "You are Ana's assistant.",
    model,
    tools: [sendEmailTool(gate, outbox), runShellTool(gate, shell)],
  });
  return { grantToken, grantId: grant?.id ?? "", gate, outbox, shell, agent };
}

function runShellTool(gate: CharterGate, ran: string[]) {
  return charterTool(gate, {
    name: "run_shell",
    description: "Run a shell command.",
    parameters: {
      type: "object",
      properties: { command: { type: "string" } },
      required: ["command"],
      additionalProperties: true,
    },
    async effect(args) {
      ran.push((args as { command: string }).command);
      return "ran";
    },
  });
}

function heldApprovalOf(gate: CharterGate, result: { interruptions: { rawItem: object }[] }) {
  const item = result.interruptions[0];
  const callId = item && "callId" in item.rawItem ? String(item.rawItem.callId) : "";
  const approvalId = gate.heldApproval(callId);
  if (approvalId === undefined) throw new Error(`no Charter approval held for ${callId}`);
  return approvalId;
}

function decide(approvalId: string, outcome: ApprovalOutcome, note = "") {
  return charter.clients.approvals.decideApproval({
    approvalId,
    outcome,
    decidedBy: OWNER,
    note,
  });
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

describe("examples/openai-agents recipe", () => {
  it("runs the walkthrough: interrupted, approved in Charter, resumed, sent once", async () => {
    const lines: string[] = [];
    const result = await walkthrough(`127.0.0.1:${charter.server.port}`, (l) => lines.push(l));
    expect(result.interrupted).toBe(1);
    expect(result.outbox.map((e) => e.to)).toEqual([OUTSIDE_EMAIL.to]);
    expect(result.finalOutput).toMatch(/^send_email answered: sent to bo@partner\.example\.org/);
    expect(lines).toContain("run interrupted: 1 call(s) held, outbox 0");
  });

  it("runs a held call only after Charter approves it, once; the same call again is held anew", async () => {
    const model = scriptedModel({ name: "send_email", args: OUTSIDE_EMAIL });
    const { grantToken, gate, outbox, agent } = await task(model);

    const first = await runner.run(agent, "Send Bo the notes.");
    expect(first.interruptions).toHaveLength(1);
    expect(first.interruptions[0]?.name).toBe("send_email");
    const raw = first.interruptions[0]?.rawItem;
    const callId = raw && "callId" in raw ? raw.callId : "";
    expect(outbox).toEqual([]);
    const approvalId = heldApprovalOf(gate, first);
    expect(await statusOf(approvalId)).toBe(ApprovalStatus.PENDING);

    // Undecided in Charter: the interruption stays unresolved, whatever the wait.
    const waiting = await resolveFromCharter(gate, first, { timeoutMs: 300, pollMs: 50 });
    expect(waiting.map((r) => r.outcome)).toEqual(["pending"]);

    // The owner approves in Charter while the app waits for the decision.
    const resolving = resolveFromCharter(gate, first, { timeoutMs: 10_000, pollMs: 50 });
    await new Promise((r) => setTimeout(r, 150));
    expect(outbox).toEqual([]);
    const { approval } = await decide(approvalId, ApprovalOutcome.APPROVE);
    expect(approval?.decidedBy).toBe(OWNER);
    expect((await resolving).map((r) => r.outcome)).toEqual(["approved"]);

    const resumed = await runner.run(agent, first.state);
    expect(resumed.interruptions).toEqual([]);
    expect(outbox.map((e) => e.to)).toEqual([OUTSIDE_EMAIL.to]);
    expect(model.seen).toEqual([expect.stringMatching(/^sent to bo@partner\.example\.org/)]);
    expect(await statusOf(approvalId)).toBe(ApprovalStatus.CONSUMED);
    // The effect got the receipt of the re-authorized call: this call, these arguments.
    const receipt = await verifiedReceipt(outbox[0]?.receipt ?? "");
    const { approval: used } = await charter.clients.approvals.getApproval({ approvalId });
    expect(receipt.toolName).toBe("send_email");
    expect(receipt.callId).toBe(callId);
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
    model.plan({ name: "send_email", args: OUTSIDE_EMAIL });
    const second = await runner.run(agent, "Send it again.");
    expect(second.interruptions).toHaveLength(1);
    const secondApproval = heldApprovalOf(gate, second);
    expect(secondApproval).not.toBe(approvalId);
    expect(await statusOf(secondApproval)).toBe(ApprovalStatus.PENDING);
    expect(outbox.map((e) => e.to)).toEqual([OUTSIDE_EMAIL.to]);
  });

  it("runs nothing when only the framework approves: execute asks Charter again", async () => {
    const model = scriptedModel({ name: "send_email", args: OUTSIDE_EMAIL });
    const { gate, outbox, agent } = await task(model);
    const first = await runner.run(agent, "Send Bo the notes.");
    const approvalId = heldApprovalOf(gate, first);

    // An app that approves in the SDK without asking Charter: the SDK resumes and calls execute.
    for (const item of first.interruptions) first.state.approve(item);
    const resumed = await runner.run(agent, first.state);
    expect(outbox).toEqual([]);
    expect(model.seen).toEqual([
      "This call is held for the owner's approval in Charter; it did not run.",
    ]);
    expect(resumed.finalOutput).toMatch(/held for the owner's approval/);
    expect(await statusOf(approvalId)).toBe(ApprovalStatus.PENDING);
  });

  it("rejects the tool call in the run when the owner rejects it in Charter", async () => {
    const model = scriptedModel({ name: "send_email", args: OUTSIDE_EMAIL });
    const { gate, outbox, agent } = await task(model);
    const first = await runner.run(agent, "Send Bo the notes.");
    const approvalId = heldApprovalOf(gate, first);
    await decide(approvalId, ApprovalOutcome.REJECT, "not to partners");

    const resolutions = await resolveFromCharter(gate, first, { timeoutMs: 5_000 });
    expect(resolutions.map((r) => r.outcome)).toEqual(["rejected"]);
    const resumed = await runner.run(agent, first.state);
    expect(resumed.interruptions).toEqual([]);
    expect(outbox).toEqual([]);
    expect(model.seen).toEqual(["The owner rejected this call in Charter: not to partners."]);
    expect(await statusOf(approvalId)).toBe(ApprovalStatus.REJECTED);
  });

  it("rejects the tool call when Charter supersedes the approval (the grant is revoked)", async () => {
    const model = scriptedModel({ name: "send_email", args: OUTSIDE_EMAIL });
    const { grantId, gate, outbox, agent } = await task(model);
    const first = await runner.run(agent, "Send Bo the notes.");
    const approvalId = heldApprovalOf(gate, first);
    await charter.clients.grants.revokeGrant({ grantId, reason: "task cancelled" });

    const resolutions = await resolveFromCharter(gate, first, { timeoutMs: 5_000 });
    expect(resolutions.map((r) => r.outcome)).toEqual(["rejected"]);
    await runner.run(agent, first.state);
    expect(outbox).toEqual([]);
    expect(model.seen).toEqual(["Charter no longer allows this call (GRANT_REVOKED)."]);
    expect(await statusOf(approvalId)).toBe(ApprovalStatus.SUPERSEDED);
  });

  it("does not run a denied call, and the model gets Charter's reason", async () => {
    const model = scriptedModel({ name: "run_shell", args: { command: "ls" } });
    const { grantToken, shell, agent } = await task(model);
    const result = await runner.run(agent, "List the files.");
    expect(result.interruptions).toEqual([]);
    expect(shell).toEqual([]);

    const { verdict } = await charter.clients.authority.authorize({
      grantToken,
      call: { callId: "probe", toolName: "run_shell", argumentsJson: '{"command":"ls"}' },
    });
    expect(verdict?.reason?.code).toBe("EXPLICIT_DENY");
    expect(model.seen).toEqual([verdict?.reason?.message]);
  });
});
