import { create } from "@bufbuild/protobuf";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import {
  Decision,
  GraphOperationSchema,
  TargetSchema,
  type ToolCall,
} from "../../src/gen/charter/v1/common_pb.js";
import type { TestCharter } from "../support/charter-server.js";
import {
  issueRun,
  OperationKind,
  operationCall,
  REFUND_WORKFLOW,
  startAgentCall,
  startRefundCharter,
} from "../support/refund-workflow.js";

// Targets and steps over real gRPC, on the refund workflow fixture: a graph run's operations are
// authorized as attempts of node activations; the same step asked again (a retry after a timeout)
// answers the verdict already given and consumes nothing more.
let charter: TestCharter;
beforeAll(async () => {
  charter = await startRefundCharter();
});
afterAll(() => charter.stop());

const authorize = async (token: string, call: ToolCall, approvalId = "") => {
  const { verdict } = await charter.clients.authority.authorize({
    grantToken: token,
    call,
    approvalId,
  });
  if (!verdict) throw new Error("no verdict");
  return verdict;
};
const lookup = (run: string, attempt = 1, order = "ord_A1B2C3") =>
  operationCall({
    run,
    node: "lookup-order",
    activation: "act-lookup",
    attempt,
    action: "refund.lookup_order",
    kind: OperationKind.ACTIVITY,
    args: { order_id: order },
  });
const usage = async (grantId: string) =>
  (await charter.server.context.store.getBudgetUsage(grantId)).calls;
const auditHead = async () => (await charter.server.context.store.auditHead())?.seq ?? 0;

describe("the same step asked twice (a client retry after a timeout)", () => {
  it("answers the same decision id and receipt, consumes one budget unit and writes no second record", async () => {
    const run = await issueRun(charter);
    const first = await authorize(run.token, lookup("run-retry"));
    expect(first).toMatchObject({ decision: Decision.ALLOW, resource: "order/ord_A1B2C3" });
    expect(first.receipt).not.toBe("");
    const head = await auditHead();
    const again = await authorize(run.token, lookup("run-retry"));
    expect(again).toEqual(first);
    expect(await usage(run.id)).toBe(1);
    expect(await auditHead()).toBe(head);
  });

  it("refuses the same step with changed arguments (STEP_CONFLICT), leaving the step's decision standing", async () => {
    const run = await issueRun(charter);
    const first = await authorize(run.token, lookup("run-conflict"));
    const changed = await authorize(run.token, lookup("run-conflict", 1, "ord_ZZZZZZ"));
    expect(changed).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "STEP_CONFLICT" },
      receipt: "",
    });
    expect(changed.decisionId).not.toBe(first.decisionId);
    expect(await authorize(run.token, lookup("run-conflict"))).toEqual(first);
    expect(await usage(run.id)).toBe(1);
  });

  it("decides attempt 2 of the activation as a new step", async () => {
    const run = await issueRun(charter);
    const first = await authorize(run.token, lookup("run-attempts", 1));
    const second = await authorize(run.token, lookup("run-attempts", 2));
    expect(second.decision).toBe(Decision.ALLOW);
    expect(second.decisionId).not.toBe(first.decisionId);
    expect(await usage(run.id)).toBe(2);
  });

  it("keys the audit records of decisions by run and step", async () => {
    const run = await issueRun(charter);
    const verdict = await authorize(run.token, lookup("run-audit", 3));
    const rows = await charter.server.context.store.readAudit(0, 100_000);
    const record = rows
      .map((r) => JSON.parse(r.entry) as Record<string, unknown>)
      .find((e) => e["decisionId"] === verdict.decisionId);
    expect(record).toMatchObject({
      kind: "decision",
      runId: "run-audit",
      step: '["activation","act-lookup",3]',
    });
  });

  it("answers many concurrent asks of one step with one decision", async () => {
    const run = await issueRun(charter);
    const verdicts = await Promise.all(
      Array.from({ length: 12 }, () => authorize(run.token, lookup("run-concurrent"))),
    );
    expect(new Set(verdicts.map((v) => v.decisionId)).size).toBe(1);
    expect(new Set(verdicts.map((v) => v.receipt)).size).toBe(1);
    expect(await usage(run.id)).toBe(1);
  });
});

describe("a graph run of the refund workflow", () => {
  it("holds a refund above 100 for a manager, allows it once approved, and always allows the signal wait", async () => {
    const run = await issueRun(charter);
    const issue = operationCall({
      run: "run-graph",
      node: "issue-refund",
      activation: "act-issue",
      action: "refund.issue",
      kind: OperationKind.ACTIVITY,
      args: { order_id: "ord_A1B2C3", amount: 250, currency: "EUR" },
    });
    expect(await authorize(run.token, lookup("run-graph"))).toMatchObject({
      decision: Decision.ALLOW,
    });
    const held = await authorize(run.token, issue);
    expect(held).toMatchObject({ decision: Decision.REQUIRE_APPROVAL, requirement: "manager" });
    // Asked again before anyone decided: the same verdict, the same approval.
    expect(await authorize(run.token, issue)).toEqual(held);
    await charter.clients.approvals.decideApproval({
      approvalId: held.approvalId,
      outcome: ApprovalOutcome.APPROVE,
      decidedBy: "manager:lea",
    });
    const allowed = await authorize(run.token, issue, held.approvalId);
    expect(allowed).toMatchObject({ decision: Decision.ALLOW, approvalId: held.approvalId });
    expect(allowed.decisionId).not.toBe(held.decisionId);
    // The runtime's retry of the approved step: the same allow, the approval not consumed twice.
    expect(await authorize(run.token, issue, held.approvalId)).toEqual(allowed);
    expect(await authorize(run.token, issue)).toEqual(allowed);
    const wait = operationCall({
      run: "run-graph",
      node: "await-confirmation",
      activation: "act-wait",
      action: "refund.await_confirmation",
      definition: "wait-customer-confirmation",
      kind: OperationKind.SIGNAL,
      args: { order_id: "ord_A1B2C3" },
    });
    expect(await authorize(run.token, wait)).toMatchObject({ decision: Decision.ALLOW });
    expect(await usage(run.id)).toBe(3);
  });

  it("asks approval for every fork, by operation kind", async () => {
    const run = await issueRun(charter);
    const fork = operationCall({
      run: "run-fork",
      node: "review",
      activation: "act-fork",
      action: "refund.split_review",
      kind: OperationKind.FORK,
      args: {},
    });
    expect(await authorize(run.token, fork)).toMatchObject({
      decision: Decision.REQUIRE_APPROVAL,
      requirement: "owner",
    });
  });

  it.each([
    // A newer runtime's kind: protobuf-es keeps the number it does not know.
    ["an operation kind this server does not know", 42 as unknown as OperationKind],
    ["OPERATION_KIND_UNSPECIFIED", OperationKind.UNSPECIFIED],
  ])("denies %s UNKNOWN_TARGET_KIND", async (_what, kind) => {
    const run = await issueRun(charter);
    const call = operationCall({
      run: "run-unknown",
      node: "n",
      activation: `act-${kind}`,
      action: "refund.lookup_order",
      kind,
      args: { order_id: "ord_A1B2C3" },
    });
    expect(await authorize(run.token, call)).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "UNKNOWN_TARGET_KIND" },
      receipt: "",
    });
  });

  it("denies a target that names no kind (UNKNOWN_TARGET_KIND), never reading it as a tool invocation", async () => {
    const run = await issueRun(charter);
    const call = { ...lookup("run-empty-target"), target: create(TargetSchema) };
    expect(await authorize(run.token, call)).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "UNKNOWN_TARGET_KIND" },
    });
  });

  it("denies an operation action called as a tool (no target): TARGET_MISMATCH", async () => {
    const run = await issueRun(charter);
    const { target: _t, ...rest } = lookup("run-no-target");
    expect(await authorize(run.token, { ...rest, target: undefined })).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "TARGET_MISMATCH" },
    });
    const signalled = {
      ...lookup("run-no-target", 2),
      target: create(TargetSchema, {
        kind: {
          case: "graphOperation",
          value: create(GraphOperationSchema, {
            operationDefinitionId: "refund.lookup_order",
            operationKind: OperationKind.SIGNAL,
          }),
        },
      }),
    };
    expect(await authorize(run.token, signalled)).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "TARGET_MISMATCH" },
    });
  });
});

describe("starting an agent", () => {
  it("is refused without a grant delegated for it, and allowed with one DelegateGrant answered", async () => {
    const run = await issueRun(charter, "agent:planner");
    expect(await authorize(run.token, startAgentCall("run-agent", "tc-1"))).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "AGENT_NOT_DELEGATED" },
    });
    const child = await charter.clients.grants.delegateGrant({
      parentToken: run.token,
      subject: "agent:refund-helper",
      allowed: ["refund.lookup_order"],
    });
    expect(
      await authorize(run.token, startAgentCall("run-agent", "tc-2", child.grantToken)),
    ).toMatchObject({
      decision: Decision.ALLOW,
      actionId: "agent.refund_helper",
    });
    // A grant delegated from another run's grant does not start this run's agent.
    const other = await issueRun(charter, "agent:other");
    const foreign = await charter.clients.grants.delegateGrant({
      parentToken: other.token,
      subject: "agent:refund-helper",
      allowed: ["refund.lookup_order"],
    });
    expect(
      await authorize(run.token, startAgentCall("run-agent", "tc-3", foreign.grantToken)),
    ).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "AGENT_NOT_DELEGATED" },
    });
  });
});

describe("a retry after the grant or the policy changed", () => {
  const dir = mkdtempSync(join(tmpdir(), "charter-steps-policy-"));
  const policyFile = join(dir, "policy.yaml");
  let withdrawable: TestCharter;
  beforeAll(async () => {
    writeFileSync(policyFile, readFileSync(REFUND_WORKFLOW.policy, "utf8"));
    withdrawable = await startRefundCharter({ config: { policy: policyFile } });
  });
  afterAll(async () => {
    await withdrawable.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const ask = async (token: string, call: ToolCall) =>
    (await withdrawable.clients.authority.authorize({ grantToken: token, call })).verdict;

  it("is denied GRANT_REVOKED, never answered from the step, once the grant is revoked", async () => {
    const run = await issueRun(withdrawable);
    expect(await ask(run.token, lookup("run-revoked"))).toMatchObject({ decision: Decision.ALLOW });
    await withdrawable.clients.grants.revokeGrant({ grantId: run.id, reason: "compromised" });
    expect(await ask(run.token, lookup("run-revoked"))).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "GRANT_REVOKED" },
      receipt: "",
    });
  });

  it("is denied POLICY_WITHDRAWN once the policy in force denies the action", async () => {
    const run = await issueRun(withdrawable);
    expect(await ask(run.token, lookup("run-withdrawn"))).toMatchObject({
      decision: Decision.ALLOW,
    });
    const policy = readFileSync(policyFile, "utf8").replace(
      'version: "refund-workflow-policy-1"',
      'version: "refund-workflow-policy-2"',
    );
    // A new global source denies the lookup: tightening reaches the outstanding grant at once.
    writeFileSync(
      policyFile,
      policy.replace(
        "\nprofiles:",
        "\n  no-lookups:\n    global: true\n    deny: [refund.lookup_order]\nprofiles:",
      ),
    );
    await withdrawable.server.reload();
    expect(await ask(run.token, lookup("run-withdrawn"))).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "POLICY_WITHDRAWN" },
      receipt: "",
    });
  });
});
