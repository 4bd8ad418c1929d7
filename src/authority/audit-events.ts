import type { AuthorityContext } from "./context.js";

/** A call the authentication layer refused: no valid credential, or a known caller without the role. */
export interface RefusedCall {
  readonly code: "UNAUTHENTICATED" | "PERMISSION_DENIED";
  /** The RPC path, e.g. `/charter.v1.GrantService/IssueGrant`. */
  readonly rpc: string;
  /** The principal, when the caller is known (PERMISSION_DENIED); never a key, a hash or a token. */
  readonly caller?: string;
  /** Why, in words: "no credentials", "an unknown or revoked API key", "needs the role issuer". */
  readonly detail: string;
}

/**
 * Records a refused call in the audit log before the refusal is answered. The record holds the
 * RPC, the principal (when known) and why — never the credential that was presented, so a key
 * pasted into the wrong header does not end up in the log.
 */
export async function auditRefusedCall(
  ctx: Pick<AuthorityContext, "store" | "now" | "audit">,
  refused: RefusedCall,
): Promise<void> {
  await ctx.store.appendAudit({
    at: ctx.now(),
    kind: refused.code === "UNAUTHENTICATED" ? "call.unauthenticated" : "call.permission_denied",
    rpc: refused.rpc.slice(0, 200),
    ...(refused.caller === undefined ? {} : { caller: refused.caller }),
    detail: refused.detail,
  });
}

/**
 * Records that a gateway hid an upstream tool and refused its calls because it differs from the
 * catalog's descriptor (tool pinning: a "rug pull"). `problem` is the gateway's own sentence.
 */
export async function auditGatewayRefusal(
  ctx: Pick<AuthorityContext, "store" | "now" | "audit">,
  refusal: { readonly toolName: string; readonly problem: string },
): Promise<void> {
  await ctx.store.appendAudit({
    at: ctx.now(),
    kind: "gateway.pin_refused",
    toolName: refusal.toolName.slice(0, 200),
    detail: refusal.problem.slice(0, 500),
  });
}

/** One webhook delivery attempt, as the audit log records it. */
export interface WebhookAttempt {
  readonly webhook: string;
  readonly eventSequence: number;
  readonly approvalId: string;
  readonly attempt: number;
  readonly delivery: "delivered" | "failed" | "abandoned";
  readonly httpStatus?: number;
  /** Why it failed, in words (an error code, a timeout); never the URL or the secret. */
  readonly detail?: string;
}

/** Records one webhook delivery attempt's outcome (`webhook.delivery`). */
export async function auditWebhookDelivery(
  ctx: Pick<AuthorityContext, "store" | "now">,
  attempt: WebhookAttempt,
): Promise<void> {
  await ctx.store.appendAudit({
    at: ctx.now(),
    kind: "webhook.delivery",
    webhook: attempt.webhook,
    eventSequence: attempt.eventSequence,
    approvalId: attempt.approvalId,
    attempt: attempt.attempt,
    delivery: attempt.delivery,
    ...(attempt.httpStatus === undefined ? {} : { httpStatus: attempt.httpStatus }),
    ...(attempt.detail === undefined ? {} : { detail: attempt.detail.slice(0, 200) }),
  });
}
