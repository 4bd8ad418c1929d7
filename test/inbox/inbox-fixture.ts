import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import {
  startTestCharter,
  type TestCharter,
  type TestCharterOptions,
} from "../support/charter-server.js";

export const OWNER = "ana@example.com";
/** A subject with a right-to-left override and markup: what the inbox must show as text. */
export const HOSTILE_SUBJECT = "invoice \u202Efdp.exe <script>alert(1)</script>";

/** A Charter serving the inbox on a free loopback port. */
export async function startInboxCharter(options: TestCharterOptions = {}): Promise<TestCharter> {
  return startTestCharter({
    ...options,
    config: { inboxListen: "127.0.0.1:0", ...options.config },
  });
}

/** The inbox's URL of a running test Charter. */
export function inboxUrl(charter: TestCharter): string {
  const url = charter.server.inboxUrl;
  if (url === undefined) throw new Error("the test Charter serves no inbox");
  return url;
}

/** A grant of the owner's assistant for `owner`, as its token. */
export async function grantFor(charter: TestCharter, owner = OWNER): Promise<string> {
  const { grantToken } = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:worker-1",
    owner,
    purpose: "inbox test",
  });
  return grantToken;
}

/** An email to an outside address: the demo holds it for the owner's approval. */
export function externalEmail(subject = "Quarterly numbers", to = "bo@outside.org"): string {
  return JSON.stringify({ to, subject, body: "See attached." });
}

/** Authorizes send_email with these arguments (and an approval id, when retrying). */
export async function sendEmail(
  charter: TestCharter,
  grantToken: string,
  argumentsJson: string,
  approvalId?: string,
) {
  const { verdict } = await charter.clients.authority.authorize({
    grantToken,
    call: { callId: `c-${argumentsJson.length}`, toolName: "send_email", argumentsJson },
    ...(approvalId === undefined ? {} : { approvalId }),
  });
  if (!verdict) throw new Error("no verdict");
  return verdict;
}

/** A pending approval for an external email; answers its id and the call to retry. */
export async function pendingApproval(
  charter: TestCharter,
  subject?: string,
): Promise<{ readonly id: string; readonly token: string; readonly args: string }> {
  const token = await grantFor(charter);
  const args = externalEmail(subject, `bo+${Math.random().toString(36).slice(2, 8)}@outside.org`);
  const verdict = await sendEmail(charter, token, args);
  if (verdict.decision !== Decision.REQUIRE_APPROVAL || verdict.approvalId === "")
    throw new Error(`expected an approval, got ${verdict.decision}`);
  return { id: verdict.approvalId, token, args };
}

/** A refund of 250: the demo holds it for two managers (requirement `manager`, 2 approvers). */
export async function pendingRefund(
  charter: TestCharter,
): Promise<{ readonly id: string; readonly token: string; readonly args: string }> {
  const token = await grantFor(charter);
  const args = JSON.stringify({
    order_id: "ord_A1B2C3",
    amount: 250,
    currency: "EUR",
    reason: "damaged",
  });
  const { verdict } = await charter.clients.authority.authorize({
    grantToken: token,
    call: { callId: "refund-1", toolName: "issue_refund", argumentsJson: args },
  });
  if (verdict?.decision !== Decision.REQUIRE_APPROVAL) throw new Error("expected an approval");
  return { id: verdict.approvalId, token, args };
}

/** A single-use link for `approver`, as the RPC makes it. */
export async function linkFor(charter: TestCharter, approvalId: string, approver = OWNER) {
  return (await charter.clients.approvals.createApprovalLink({ approvalId, approver })).url;
}
