import { createHmac, timingSafeEqual } from "node:crypto";

/** How far a `webhook-timestamp` may be from the receiver's clock, in seconds (Standard Webhooks' 5 minutes). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** `v1,<base64 HMAC-SHA256 over "id.timestamp.body">`: the `webhook-signature` header. */
export function signWebhook(key: Uint8Array, id: string, timestamp: number, body: string): string {
  const mac = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** The headers of one signed delivery. */
export function webhookHeaders(
  key: Uint8Array,
  id: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signWebhook(key, id, timestamp, body),
  };
}

/**
 * What a receiver runs on a delivery (copy it: it needs only node:crypto). True when the
 * timestamp is within `toleranceSeconds` of `now` (Unix seconds) and one of the signatures in
 * the header (space-separated `v1,<base64>`) is the HMAC of "id.timestamp.body" under `key`;
 * compared in constant time. `body` is the raw request body, before any JSON parsing.
 */
export function verifyWebhook(
  key: Uint8Array,
  headers: {
    readonly "webhook-id"?: string;
    readonly "webhook-timestamp"?: string;
    readonly "webhook-signature"?: string;
  },
  body: string,
  now: number,
  toleranceSeconds = WEBHOOK_TOLERANCE_SECONDS,
): boolean {
  const id = headers["webhook-id"];
  const stamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (id === undefined || stamp === undefined || signatures === undefined) return false;
  if (!/^\d{1,12}$/.test(stamp)) return false;
  const timestamp = Number(stamp);
  if (Math.abs(now - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(key, id, timestamp, body).slice(3), "base64");
  return signatures.split(" ").some((s) => {
    if (!s.startsWith("v1,")) return false;
    const given = Buffer.from(s.slice(3), "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
