import { hostname } from "node:os";
import { resolve } from "node:path";
import type { Logger } from "pino";
import { startWebhookDelivery, type WebhookDeliverer } from "../authority/index.js";
import type { CharterConfig } from "../config/config.js";
import { loadWebhooksFile, type WebhookSet } from "../load/webhooks.js";
import type { AppContext } from "./context.js";

/**
 * The `webhooks` document, read at start-up in every server process (so a bad one stops
 * start-up wherever it runs, exit 78); undefined when `webhooks` is unset. URLs and secrets come
 * from the environment variables it names.
 */
export async function loadWebhooks(
  config: Pick<CharterConfig, "webhooks">,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<WebhookSet | undefined> {
  return config.webhooks === "" ? undefined : loadWebhooksFile(config.webhooks, env);
}

/**
 * Starts delivering approval events in the process that does it: a single server process, or
 * the worker of slot 1 under `--workers N` (its replacement after a crash). Every process that
 * shares a PostgreSQL store competes for the store's webhook lease; only its holder delivers.
 * The holder is named by host, data dir and slot: a crashed process restarted takes it back.
 * Failures are logged at warn by webhook name only (never a URL or a secret).
 */
export function startWebhooks(
  ctx: AppContext,
  set: WebhookSet | undefined,
  config: Pick<CharterConfig, "webhookInboxUrl" | "slackSigningSecret" | "dataDir">,
  log: Logger,
  worker: number | undefined,
): WebhookDeliverer | undefined {
  if (set === undefined || (worker !== undefined && worker !== 1)) return undefined;
  const deliverer = startWebhookDelivery(ctx, {
    webhooks: set.webhooks,
    delivery: set.delivery,
    message: {
      ...(config.webhookInboxUrl === "" ? {} : { linkBase: config.webhookInboxUrl }),
      slackActions: config.slackSigningSecret !== "",
    },
    // Stable across restarts of this process (same host, data dir and worker slot), so a process
    // restarted after a crash takes back its own lease at once instead of waiting for it to expire.
    holder: `${hostname()}|${resolve(config.dataDir)}|${worker ?? 0}`,
    onError: (message) => log.warn({ event: "webhook.delivery_failed" }, message),
  });
  log.info({ webhooks: set.webhooks.map((w) => w.name) }, "delivering approval events to webhooks");
  return deliverer;
}
