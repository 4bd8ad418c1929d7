import { readFile } from "node:fs/promises";
import { isIPv4 } from "node:net";
import { Ajv2020 } from "ajv/dist/2020.js";
import { APPROVAL_EVENT_KINDS, type ApprovalEventKind } from "../core/approval.js";
import { LoadError } from "../core/errors.js";
import {
  DEFAULT_WEBHOOK_DELIVERY,
  type Webhook,
  type WebhookDelivery,
  type WebhookFormat,
} from "../core/webhook.js";
import { parseDocumentText, readText } from "./documents.js";

const SCHEMA_FILE = new URL("../../schemas/webhooks.schema.json", import.meta.url);

/** The webhooks document, read: the receivers and how deliveries are tried. */
export interface WebhookSet {
  readonly webhooks: readonly Webhook[];
  readonly delivery: WebhookDelivery;
}

interface WebhookEntry {
  readonly name: string;
  readonly url?: string;
  readonly urlEnv?: string;
  readonly format: WebhookFormat;
  readonly secretEnv?: string;
  readonly events?: readonly ApprovalEventKind[];
  readonly owners?: readonly string[];
}

/** A webhook secret as a key: `whsec_<base64>` (the Standard Webhooks form) is the decoded bytes, any other text its UTF-8 bytes. */
export function webhookKey(secret: string): Uint8Array {
  return secret.startsWith("whsec_")
    ? Buffer.from(secret.slice("whsec_".length), "base64")
    : Buffer.from(secret, "utf8");
}

/** True for a loopback host name of a URL: 127.0.0.0/8, [::1], localhost. */
function loopbackHost(hostname: string): boolean {
  return (
    hostname === "localhost" ||
    hostname === "[::1]" ||
    (isIPv4(hostname) && hostname.startsWith("127."))
  );
}

/** Why `text` may not be a webhook URL (never echoing it: it may be a secret), or undefined. */
function urlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "is not a URL";
  }
  if (url.username !== "" || url.password !== "")
    return "holds user:password@ (put credentials in the receiver's own secret, not the URL)";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:")
    return loopbackHost(url.hostname) ? undefined : "is http:// to a non-loopback host (use https)";
  return "must be https:// (or http:// to loopback)";
}

/**
 * Reads the `webhooks` document (YAML or JSON, checked against schemas/webhooks.schema.json) and
 * takes each URL and secret its variables name from `env`. Every problem of the file is a
 * LoadError naming it and the webhook; no message holds a URL or a secret.
 */
export async function loadWebhooksFile(
  file: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<WebhookSet> {
  const doc = parseDocumentText(await readText(file), file);
  const schema = JSON.parse(await readFile(SCHEMA_FILE, "utf8")) as object;
  const check = new Ajv2020({ allErrors: true, strict: true, strictRequired: false }).compile(
    schema,
  );
  if (!check(doc)) {
    const errors = (check.errors ?? []) as { instancePath: string; message?: string }[];
    throw new LoadError(
      errors.map((e) => ({ file, message: `${e.instancePath || "/"}: ${e.message ?? "invalid"}` })),
    );
  }
  const value = doc as {
    readonly webhooks: readonly WebhookEntry[];
    readonly delivery?: Partial<WebhookDelivery>;
  };
  const problems: string[] = [];
  const names = new Set<string>();
  const webhooks: Webhook[] = [];
  for (const entry of value.webhooks) {
    const at = `webhook ${entry.name}`;
    if (names.has(entry.name)) problems.push(`${at}: the name is used twice`);
    names.add(entry.name);
    const url = entry.url ?? env[entry.urlEnv ?? ""] ?? "";
    if (url === "") problems.push(`${at}: the environment variable ${entry.urlEnv ?? ""} is unset`);
    else {
      const bad = urlProblem(url);
      if (bad !== undefined)
        problems.push(
          `${at}: its URL${entry.urlEnv === undefined ? "" : ` (${entry.urlEnv})`} ${bad}`,
        );
    }
    let secret: Uint8Array | undefined;
    if (entry.secretEnv !== undefined) {
      const text = env[entry.secretEnv] ?? "";
      if (text === "") problems.push(`${at}: the environment variable ${entry.secretEnv} is unset`);
      else if (webhookKey(text).length < 16)
        problems.push(`${at}: the secret in ${entry.secretEnv} is shorter than 16 bytes`);
      else secret = webhookKey(text);
    } else if (entry.format === "json")
      problems.push(`${at}: format json needs secretEnv (the signing secret's variable)`);
    webhooks.push({
      name: entry.name,
      url,
      format: entry.format,
      events: entry.events ?? APPROVAL_EVENT_KINDS,
      ...(entry.owners === undefined ? {} : { owners: entry.owners }),
      ...(secret === undefined ? {} : { secret }),
    });
  }
  const delivery = { ...DEFAULT_WEBHOOK_DELIVERY, ...value.delivery };
  if (delivery.retryMaxMs < delivery.retryInitialMs)
    problems.push("delivery.retryMaxMs is less than delivery.retryInitialMs");
  if (problems.length > 0) throw new LoadError(problems.map((message) => ({ file, message })));
  return { webhooks, delivery };
}
