import type { ApprovalEvent } from "../core/approval.js";
import { wantsEvent, type Webhook, type WebhookDelivery } from "../core/webhook.js";
import { auditWebhookDelivery } from "./audit-events.js";
import type { AuthorityContext } from "./context.js";
import { createWebhookLease } from "./webhook-lease.js";
import type { MessageOptions } from "./webhook-messages.js";
import { sendWebhook } from "./webhook-send.js";

/** Events read from the store at once per webhook: the bound of what a deliverer holds in memory. */
export const WEBHOOK_BATCH = 100;

/** The `store_meta` name of a webhook's cursor: the sequence of the last event it is done with. */
export const webhookCursorMeta = (name: string): string => `webhook_cursor:${name}`;

/** A stored cursor as a sequence; a value that is not one is an error (the deliverer retries, and logs it). */
function cursorValue(name: string, text: string): number {
  const n = Number(text);
  if (!/^\d{1,15}$/.test(text) || !Number.isSafeInteger(n))
    throw new Error(`the stored cursor of webhook ${name} is not a sequence`);
  return n;
}

export type DeliveryOutcome = "delivered" | "failed" | "abandoned";

/** The running deliverer of every configured webhook. */
export interface WebhookDeliverer {
  /** Attempts so far, by webhook and outcome (`charter_webhook_deliveries_total`). */
  deliveries(): readonly { webhook: string; outcome: DeliveryOutcome; count: number }[];
  /** Ends every delivery (an attempt in flight is cut off; its event is sent again at the next start) and gives up the lease. */
  stop(): Promise<void>;
}

export interface WebhookDelivererOptions {
  readonly webhooks: readonly Webhook[];
  readonly delivery: WebhookDelivery;
  /** The inbox link and Slack's buttons. */
  readonly message?: MessageOptions;
  /** This process, in the lease (unique per process). */
  readonly holder: string;
  /** Where failures are reported (the server logs them at warn); never holds a URL or a secret. */
  readonly onError: (message: string) => void;
  readonly fetch?: typeof fetch;
  readonly random?: () => number;
}

/**
 * Delivers approval events to webhooks, driven by the store's event feed: each webhook has its
 * cursor in `store_meta` (created at the newest event the first time it is seen: a new webhook
 * is not sent the past), reads at most {@link WEBHOOK_BATCH} events after it, and moves it past
 * an event once it is delivered or abandoned — so a restart resumes where it stopped and a
 * delivery may be repeated (at-least-once: receivers dedupe on `webhook-id`). Each attempt is
 * audited (`webhook.delivery`) and counted; a failed one is tried again after an exponential
 * back-off with jitter, capped, up to `maxAttempts`. Webhooks run apart: one that keeps failing
 * holds back only its own events. Woken by this process's approval feed at once, else every
 * `pollMs`. Only the holder of the store's webhook lease delivers.
 */
export function startWebhookDelivery(
  ctx: Pick<AuthorityContext, "store" | "now" | "approvalFeed" | "approvalLinks">,
  options: WebhookDelivererOptions,
): WebhookDeliverer {
  const stopping = new AbortController();
  const signal = stopping.signal;
  // Read through a call: an await may have aborted it since the last look.
  const stopped = () => signal.aborted;
  const { delivery } = options;
  const random = options.random ?? Math.random;
  const doFetch = options.fetch ?? fetch;
  const lease = createWebhookLease(ctx.store, options.holder);
  const counts = new Map<string, { webhook: string; outcome: DeliveryOutcome; count: number }>();
  const count = (webhook: string, outcome: DeliveryOutcome) => {
    const key = `${webhook}\u0000${outcome}`;
    const entry = counts.get(key) ?? { webhook, outcome, count: 0 };
    entry.count += 1;
    counts.set(key, entry);
  };

  const pause = (ms: number, since?: number) =>
    new Promise<void>((resolve) => {
      const wake = new AbortController();
      const timer = setTimeout(() => wake.abort(), ms);
      timer.unref();
      const onStop = () => wake.abort();
      signal.addEventListener("abort", onStop, { once: true });
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onStop);
        resolve();
      };
      if (since === undefined) wake.signal.addEventListener("abort", done, { once: true });
      else void ctx.approvalFeed.wait(wake.signal, since).then(done);
    });

  const backoff = (attempt: number) => {
    const cap = Math.min(delivery.retryMaxMs, delivery.retryInitialMs * 2 ** (attempt - 1));
    return Math.round(cap * (0.5 + random() / 2));
  };

  /** Sends one event until it is delivered or abandoned (true), or the deliverer stops or loses the lease (false). */
  const deliver = async (hook: Webhook, event: ApprovalEvent): Promise<boolean> => {
    for (let attempt = 1; ; attempt += 1) {
      // Renewed before every attempt: a long series of retries keeps the lease, or gives the event up to the new holder.
      if (signal.aborted || !(await lease.held())) return false;
      // The link base named, else the inbox's own URL once it serves.
      const base = options.message?.linkBase ?? (await ctx.approvalLinks?.baseUrl());
      const result = await sendWebhook(hook, event, {
        message: { ...options.message, ...(base === undefined ? {} : { linkBase: base }) },
        timeoutMs: delivery.timeoutMs,
        now: ctx.now(),
        signal,
        fetch: doFetch,
      });
      if (stopped() && !result.ok) return false;
      const outcome: DeliveryOutcome = result.ok
        ? "delivered"
        : attempt >= delivery.maxAttempts
          ? "abandoned"
          : "failed";
      count(hook.name, outcome);
      await auditWebhookDelivery(ctx, {
        webhook: hook.name,
        eventSequence: event.sequence,
        approvalId: event.approval.id,
        attempt,
        delivery: outcome,
        ...(result.httpStatus === undefined ? {} : { httpStatus: result.httpStatus }),
        ...(result.detail === undefined ? {} : { detail: result.detail }),
      });
      if (outcome === "delivered") return true;
      const what = `webhook ${hook.name}: event ${event.sequence} attempt ${attempt} failed (${result.detail ?? "?"})`;
      if (outcome === "abandoned") {
        options.onError(`${what}; abandoned after ${attempt} attempts`);
        return true;
      }
      const wait = backoff(attempt);
      options.onError(`${what}; retrying in ${wait} ms`);
      await pause(wait);
    }
  };

  const run = async (hook: Webhook): Promise<void> => {
    const key = webhookCursorMeta(hook.name);
    let cursor: number | undefined;
    while (!signal.aborted) {
      const seen = ctx.approvalFeed.generation();
      let more = false;
      let holder = true;
      try {
        holder = await lease.held();
        if (holder) {
          cursor ??= cursorValue(
            hook.name,
            await ctx.store.claimMeta(key, String(await ctx.store.lastApprovalSequence())),
          );
          const events = await ctx.store.approvalEvents(undefined, cursor, WEBHOOK_BATCH);
          let unsaved = false;
          for (const event of events) {
            if (wantsEvent(hook, event)) {
              if (!(await deliver(hook, event))) break;
              cursor = event.sequence;
              await ctx.store.writeMeta(key, String(cursor));
              unsaved = false;
            } else {
              cursor = event.sequence;
              unsaved = true;
            }
          }
          if (unsaved) await ctx.store.writeMeta(key, String(cursor));
          more = events.length === WEBHOOK_BATCH;
        }
      } catch (err) {
        // The cursor stays where the store has it: what was not recorded is sent again.
        cursor = undefined;
        options.onError(
          `webhook ${hook.name}: ${(err as Error).message}; retrying in ${delivery.pollMs} ms`,
        );
        await pause(delivery.pollMs);
        continue;
      }
      // A process without the lease looks again every pollMs; the holder is also woken by the feed.
      if (!more) await pause(delivery.pollMs, holder ? seen : undefined);
    }
  };

  const loops = options.webhooks.map((hook) => run(hook));
  return {
    deliveries: () => [...counts.values()].map((c) => ({ ...c })),
    async stop() {
      stopping.abort();
      await Promise.all(loops);
      await lease.release().catch(() => undefined);
    },
  };
}
