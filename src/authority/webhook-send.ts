import type { ApprovalEvent } from "../core/approval.js";
import type { Webhook } from "../core/webhook.js";
import { webhookBody, type MessageOptions } from "./webhook-messages.js";
import { webhookHeaders } from "./webhook-signature.js";

/** One attempt's outcome: a 2xx answer, or why not (a status, or an error in words: never the URL). */
export interface AttemptResult {
  readonly ok: boolean;
  readonly httpStatus?: number;
  readonly detail?: string;
}

export interface SendOptions {
  readonly message: MessageOptions;
  readonly timeoutMs: number;
  /** Unix seconds: the `webhook-timestamp`. */
  readonly now: number;
  /** Aborts the attempt when the deliverer stops. */
  readonly signal: AbortSignal;
  readonly fetch: typeof fetch;
}

/**
 * One delivery attempt of `event` to `hook`: the body in the webhook's format, signed (`json`:
 * `webhook-id` is the event's sequence, so a retry carries the same id), POSTed with a time limit.
 * Redirects are not followed (a 3xx is a failure). Never throws.
 */
export async function sendWebhook(
  hook: Webhook,
  event: ApprovalEvent,
  options: SendOptions,
): Promise<AttemptResult> {
  const body = webhookBody(hook, event, options.message);
  const id = String(event.sequence);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "charter-webhooks",
    ...(hook.secret === undefined ? {} : webhookHeaders(hook.secret, id, options.now, body)),
  };
  try {
    const response = await options.fetch(hook.url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]),
    });
    // The answer's body is not read: release the connection.
    await response.body?.cancel().catch(() => undefined);
    return response.status >= 200 && response.status < 300
      ? { ok: true, httpStatus: response.status }
      : { ok: false, httpStatus: response.status, detail: `HTTP ${response.status}` };
  } catch (err) {
    return { ok: false, detail: failureText(err, options.timeoutMs) };
  }
}

/** An error in words without the URL: a timeout, the system error code, or the error's name. */
function failureText(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; cause?: { code?: unknown; name?: unknown } };
  if (e.name === "TimeoutError") return `timed out after ${timeoutMs} ms`;
  if (e.name === "AbortError") return "stopped";
  const code = e.cause?.code;
  if (typeof code === "string" && /^[A-Z0-9_]{1,40}$/.test(code)) return code;
  const name = e.cause?.name ?? e.name;
  return typeof name === "string" && /^\w{1,40}$/.test(name) ? name : "request failed";
}
