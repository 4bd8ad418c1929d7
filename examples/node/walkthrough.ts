/**
 * A gateway's-eye walkthrough of Charter with the TypeScript client: issue a grant, fetch the
 * worker's tool catalog, authorize an allowed, a denied and an approval-requiring call, verify the
 * allow's receipt offline against the JWKS, then have two managers approve the held refund (a
 * 2-of-N requirement) and retry it with its approval id.
 *
 *   npm start                                   # in one terminal
 *   npm run example:node -- 127.0.0.1:50051      # in another
 */
import { createCharterClients } from "../../src/client/index.js";
import { ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { Decision, Dialect } from "../../src/gen/charter/v1/common_pb.js";
import { verifyReceipt, type Jwks } from "../../src/token/index.js";

/** What the walkthrough saw, for a test to check and a person to read. */
export interface WalkthroughResult {
  readonly tools: string[];
  readonly verdicts: {
    readonly call: string;
    readonly decision: string;
    readonly reason: string;
    readonly requirement: string;
  }[];
  readonly receiptVerified: boolean;
  /** The decision for the held call retried with its approval id, once approved. */
  readonly afterApproval: string;
}

const refund = (amount: number) =>
  JSON.stringify({ order_id: "ord_A1B2C3", amount, currency: "EUR", reason: "damaged" });

export async function walkthrough(
  address: string,
  options: { issuer: string; audience: string },
  log: (line: string) => void,
): Promise<WalkthroughResult> {
  const charter = createCharterClients({ address });
  try {
    // The orchestrator issues a grant for a task; the token goes to the worker and its gateway.
    const { grantToken, grant } = await charter.grants.issueGrant(
      {
        profile: "owner-assistant",
        subject: "agent:worker-1",
        owner: "ana@example.com",
        purpose: "handle a refund request",
      },
      { timeoutMs: 5_000 },
    );
    log(`grant ${String(grant?.id)} expires at ${String(grant?.expiresAt)}`);

    // The worker fetches its catalog, rendered for its model framework.
    const { view } = await charter.catalog.getCatalog(
      { grantToken, dialect: Dialect.ANTHROPIC },
      { timeoutMs: 5_000 },
    );
    const tools = view?.tools.map((t) => t.name) ?? [];
    log(`catalog: ${tools.length} tools (${tools.slice(0, 5).join(", ")}, …)`);

    // The gateway authorizes each call before it runs.
    const calls = [
      { callId: "call-1", toolName: "issue_refund", argumentsJson: refund(40) },
      { callId: "call-2", toolName: "run_shell", argumentsJson: JSON.stringify({ command: "ls" }) },
      { callId: "call-3", toolName: "issue_refund", argumentsJson: refund(250) },
    ];
    const { verdicts } = await charter.authority.batchAuthorize(
      { grantToken, items: calls.map((call) => ({ call })) },
      { timeoutMs: 5_000 },
    );
    const summary = verdicts.map((v) => ({
      call: `${v.callId} ${v.toolName}`,
      decision: Decision[v.decision],
      reason: v.reason?.code ?? "",
      requirement: v.requirement,
    }));
    for (const s of summary)
      log(
        `${s.call}: ${s.decision}${s.reason ? ` ${s.reason}` : ""}${s.requirement ? ` (${s.requirement})` : ""}`,
      );

    // A tool service verifies the allow's receipt offline, with the JWKS fetched once.
    const jwks = JSON.parse((await charter.keys.getJwks({})).jwksJson) as Jwks;
    const allowed = verdicts.find((v) => v.decision === Decision.ALLOW);
    const receipt = await verifyReceipt(allowed?.receipt ?? "", jwks, {
      ...options,
      now: Math.floor(Date.now() / 1000),
    });
    log(
      `receipt for ${String(allowed?.callId)}: ${receipt.ok ? "verified" : `refused (${receipt.code})`}`,
    );

    // The held refund waits for two distinct managers (the demo policy's 2-of-N requirement).
    const held = verdicts.find((v) => v.decision === Decision.REQUIRE_APPROVAL);
    const { approvals } = await charter.approvals.listApprovals(
      { owner: "ana@example.com" },
      { timeoutMs: 5_000 },
    );
    log(`pending approvals for ana@example.com: ${approvals.length}`);
    for (const manager of ["manager:lea", "manager:max"]) {
      const { approval } = await charter.approvals.decideApproval({
        approvalId: held?.approvalId ?? "",
        outcome: ApprovalOutcome.APPROVE,
        decidedBy: manager,
        note: "",
      });
      log(
        `${manager} approved: ${String(approval?.approvedBy.length)} of ${String(approval?.requiredApprovals)}`,
      );
    }
    const { verdict } = await charter.authority.authorize(
      { grantToken, call: calls[2], approvalId: held?.approvalId ?? "" },
      { timeoutMs: 5_000 },
    );
    const afterApproval = Decision[verdict?.decision ?? Decision.UNSPECIFIED];
    log(`call-3 retried with ${String(held?.approvalId)}: ${afterApproval}`);
    return { tools, verdicts: summary, receiptVerified: receipt.ok, afterApproval };
  } finally {
    charter.close();
  }
}

const entry = process.argv[1] ?? "";
if (entry.endsWith("walkthrough.js")) {
  const address = process.argv[2] ?? "127.0.0.1:50051";
  walkthrough(
    address,
    {
      issuer: process.env["CHARTER_ISSUER"] ?? "charter-demo",
      audience: process.env["CHARTER_AUDIENCE"] ?? "charter-demo",
    },
    console.log,
  ).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
