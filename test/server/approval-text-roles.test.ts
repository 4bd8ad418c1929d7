import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/authority/index.js";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { ApprovalStatus, Decision } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { runCapture } from "../support/cli.js";

// Issue 22 finding 9, against the real server with API keys: approval text carrying bidi
// overrides and HTML reaches the owner escaped (RPC and CLI), and the demo's two-managers
// requirement counts only holders of approve:manager, never the owner or an admin.
const OWNER = "ana@example.com";
const DECEIT = "Monthly \u202eplan\u202c <script>alert(1)</script> \u2066x\u2069\u200b";
const RAW = /[\u202a-\u202e\u2066-\u2069\u200b]/;

let charter: TestCharter;
let address: string;
const secrets = new Map<string, string>();
const clients = new Map<string, CharterClients>();

function known<T>(map: ReadonlyMap<string, T>, name: string): T {
  const value = map.get(name);
  if (value === undefined) throw new Error(`no caller ${name}`);
  return value;
}
const as = (name: string) => known(clients, name);
const secretOf = (name: string) => known(secrets, name);

beforeAll(async () => {
  charter = await startTestCharter();
  address = `127.0.0.1:${charter.server.port}`;
  const keys: [string, string, string[]][] = [
    ["orchestrator", "orchestrator", ["issuer", "gateway"]],
    ["owner", OWNER, ["approver"]],
    ["admin", "ops", ["admin"]],
    ["lea", "manager:lea", ["approve:manager"]],
    ["max", "manager:max", ["approver", "approve:manager"]],
  ];
  for (const [name, principal, roles] of keys) {
    const { secret } = await createApiKey(charter.server.context, { principal, roles });
    secrets.set(name, secret);
    clients.set(
      name,
      createCharterClients({ address, metadata: { authorization: `Bearer ${secret}` } }),
    );
  }
});
afterAll(async () => {
  for (const c of clients.values()) c.close();
  await charter.stop();
});

async function held(toolName: string, args: Record<string, unknown>) {
  const { grantToken } = await as("orchestrator").grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:worker-1",
    owner: OWNER,
    purpose: "approval text",
  });
  const argumentsJson = JSON.stringify(args);
  const ask = async (approvalId?: string) => {
    const { verdict } = await as("orchestrator").authority.authorize({
      grantToken,
      call: { callId: "c-1", toolName, argumentsJson },
      ...(approvalId === undefined ? {} : { approvalId }),
    });
    return verdict;
  };
  const verdict = await ask();
  expect(verdict?.decision).toBe(Decision.REQUIRE_APPROVAL);
  return { approvalId: verdict?.approvalId ?? "", requirement: verdict?.requirement, ask };
}

const decide = (who: string, approvalId: string, outcome = ApprovalOutcome.APPROVE, note = "") =>
  as(who).approvals.decideApproval({ approvalId, outcome, decidedBy: who, note });

describe("approval text an owner is shown", () => {
  it("shows bidi, invisible characters and HTML as text via the RPC; the approved call is the original", async () => {
    const args = {
      customer_id: "cus_ABC123",
      amount: 42,
      currency: "EUR",
      description: DECEIT,
      authorization_code: "SECRET",
    };
    const call = await held("charge_payment", args);
    const { approval } = await as("owner").approvals.getApproval({ approvalId: call.approvalId });
    const description = approval?.summary.find((s) => s.path === "/description");
    expect(description?.valueJson).not.toMatch(RAW);
    expect(JSON.parse(description?.valueJson ?? "null")).toBe(
      "Monthly \\u{202E}plan\\u{202C} <script>alert(1)</script> \\u{2066}x\\u{2069}\\u{200B}",
    );
    const { approvals } = await as("owner").approvals.listApprovals({
      owner: OWNER,
      status: ApprovalStatus.PENDING,
    });
    const listed = approvals.find((a) => a.id === call.approvalId);
    expect(JSON.stringify(listed?.summary)).toContain("\\\\u{202E}plan");
    expect(JSON.stringify(listed?.summary)).not.toMatch(RAW);

    const decided = await decide(
      "owner",
      call.approvalId,
      ApprovalOutcome.APPROVE,
      "ok \u202egnp.exe",
    );
    expect(decided.approval).toMatchObject({
      status: ApprovalStatus.APPROVED,
      note: "ok \\u{202E}gnp.exe",
    });
    // Only the display changed: the call as the agent made it is the one approved.
    expect((await call.ask(call.approvalId))?.decision).toBe(Decision.ALLOW);
  });

  it("shows the same escapes in the CLI's approvals list and show", async () => {
    const call = await held("charge_payment", {
      customer_id: "cus_ABC123",
      amount: 43,
      currency: "EUR",
      description: DECEIT,
      authorization_code: "SECRET",
    });
    for (const args of [
      ["approvals", "list", "--owner", OWNER, "--status", "pending"],
      ["approvals", "show", call.approvalId],
    ]) {
      const run = await runCapture([...args, "--server", address, "--api-key", secretOf("owner")]);
      expect(run).toMatchObject({ code: 0 });
      expect(run.out).toContain(call.approvalId);
      expect(run.out).toContain("<script>alert(1)</script>");
      expect(run.out).toMatch(/\\+u\{202E\}plan\\+u\{202C\}/);
      expect(run.out).not.toMatch(RAW);
    }
  });
});

describe("the demo's two-managers requirement", () => {
  const refund = { order_id: "ord_A1B2C3", amount: 250, currency: "EUR", reason: "damaged" };

  it("is not met by the owner and an admin: both refused, nothing changes", async () => {
    const call = await held("issue_refund", refund);
    expect(call.requirement).toBe("manager");
    for (const who of ["owner", "admin"]) {
      const refused = await decide(who, call.approvalId).then(
        () => expect.unreachable(`${who} must not approve`),
        (err: unknown) => err as { code: number; details: string },
      );
      expect(refused.code).toBe(7); // PERMISSION_DENIED
      expect(refused.details).toContain("needs the role approve:manager");
      expect(refused.details).toContain("admin alone does not approve");
    }
    const { approval } = await as("admin").approvals.getApproval({ approvalId: call.approvalId });
    expect(approval).toMatchObject({ status: ApprovalStatus.PENDING, approvedBy: [] });
    expect((await call.ask(call.approvalId))?.decision).toBe(Decision.REQUIRE_APPROVAL);
  });

  it("is not met through the CLI by the owner either", async () => {
    const call = await held("issue_refund", { ...refund, amount: 260 });
    const run = await runCapture([
      "approvals",
      "approve",
      call.approvalId,
      "--by",
      OWNER,
      "--server",
      address,
      "--api-key",
      secretOf("owner"),
    ]);
    expect(run.code).not.toBe(0);
    expect(run.err).toContain("needs the role approve:manager");
  });

  it("is met by two holders of approve:manager, who see it though they do not own it", async () => {
    const call = await held("issue_refund", { ...refund, amount: 270 });
    const { approvals } = await as("lea").approvals.listApprovals({ owner: OWNER });
    expect(approvals.map((a) => a.id)).toContain(call.approvalId);
    expect(approvals.every((a) => a.requirement === "manager")).toBe(true);
    expect((await decide("lea", call.approvalId)).approval).toMatchObject({
      status: ApprovalStatus.PENDING,
      approvedBy: ["manager:lea"],
    });
    expect((await decide("max", call.approvalId)).approval).toMatchObject({
      status: ApprovalStatus.APPROVED,
      approvedBy: ["manager:lea", "manager:max"],
    });
    expect((await call.ask(call.approvalId))?.decision).toBe(Decision.ALLOW);
  });

  it("streams a manager the manager approvals of every owner, and no others", async () => {
    const stop = new AbortController();
    const seen: string[] = [];
    const watching = (async () => {
      for await (const e of as("lea").approvals.watchApprovals(
        { owner: "" },
        { signal: stop.signal },
      ))
        seen.push(`${e.approval?.id ?? ""} ${e.approval?.requirement ?? ""}`);
    })().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    const mine = await held("charge_payment", {
      customer_id: "cus_ABC123",
      amount: 45,
      currency: "EUR",
      description: "x",
      authorization_code: "SECRET",
    });
    const managers = await held("issue_refund", { ...refund, amount: 280 });
    await expect.poll(() => seen, { timeout: 5_000 }).toContain(`${managers.approvalId} manager`);
    stop.abort();
    await watching;
    expect(seen.join("\n")).not.toContain(mine.approvalId);
  });

  it("does not let a manager see or answer the owner's own approvals", async () => {
    const call = await held("charge_payment", {
      customer_id: "cus_ABC123",
      amount: 44,
      currency: "EUR",
      description: "x",
      authorization_code: "SECRET",
    });
    await expect(
      as("lea").approvals.getApproval({ approvalId: call.approvalId }),
    ).rejects.toMatchObject({ code: 7 });
    await expect(decide("lea", call.approvalId)).rejects.toMatchObject({ code: 7 });
  });
});
