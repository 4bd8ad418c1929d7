import { APPROVAL_EVENT_KINDS, type ApprovalEvent } from "./approval.js";
import type { ApprovalEventKind } from "./approval.js";

export const WEBHOOK_FORMATS = ["json", "slack"] as const;
/** `json`: a signed Standard Webhooks message; `slack`: a Slack incoming-webhook message. */
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** One configured receiver of approval events. `secret` and `url` are secrets: never logged or audited. */
export interface Webhook {
  /** The name it is logged, audited and counted by (`[a-z0-9_-]`, at most 64 characters). */
  readonly name: string;
  readonly url: string;
  readonly format: WebhookFormat;
  /** The approval event kinds it is sent. */
  readonly events: readonly ApprovalEventKind[];
  /** Only these owners' approvals; undefined: every owner's. */
  readonly owners?: readonly string[];
  /** The HMAC key of the `webhook-signature` header (`json`; absent for `slack`). */
  readonly secret?: Uint8Array;
}

/** How deliveries are tried (the webhooks document's `delivery`). */
export interface WebhookDelivery {
  /** One attempt's time limit, in ms. */
  readonly timeoutMs: number;
  /** The wait before the second attempt, in ms; it doubles per attempt (with jitter) up to `retryMaxMs`. */
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
  /** Attempts of one event before it is abandoned (audited, counted, and the next event sent). */
  readonly maxAttempts: number;
  /** How often the store is read for other processes' events when nothing woke the deliverer, in ms. */
  readonly pollMs: number;
}

export const DEFAULT_WEBHOOK_DELIVERY: WebhookDelivery = {
  timeoutMs: 5000,
  retryInitialMs: 1000,
  retryMaxMs: 300_000,
  maxAttempts: 15,
  pollMs: 2000,
};

export { APPROVAL_EVENT_KINDS };

/** Whether `hook` wants `event` (its kinds, its owners). */
export function wantsEvent(hook: Webhook, event: ApprovalEvent): boolean {
  return (
    hook.events.includes(event.kind) &&
    (hook.owners === undefined || hook.owners.includes(event.approval.owner))
  );
}

/** Where the inbox shows an approval, under `base` (no link without one). */
export function inboxLink(base: string | undefined, approvalId: string): string | undefined {
  if (base === undefined || base === "") return undefined;
  return `${base.replace(/\/+$/, "")}/approvals/${encodeURIComponent(approvalId)}`;
}
