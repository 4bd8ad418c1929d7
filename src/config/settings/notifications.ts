import { httpUrl, text } from "./types.js";
import { setting } from "./setting.js";

/** Where approval events are sent. */
export const NOTIFICATION_SETTINGS = {
  webhooks: setting({
    type: text({ shape: 'file or "" (off)' }),
    default: "",
    defaultText: "(none: off)",
    env: "CHARTER_WEBHOOKS",
    description:
      "a YAML or JSON document (schemas/webhooks.schema.json) of webhooks sent approval events: per webhook a name, a URL (https, or http to loopback) or `urlEnv`, a format (`json`: signed Standard Webhooks; `slack`), the event kinds and owners it wants, and `secretEnv`, the environment variable holding its signing secret (never the secret itself). Delivered by one process, at least once (see Notifications in approvals.md); a document that does not load stops start-up (exit 78)",
    reload: "restart",
  }),
  webhookInboxUrl: setting({
    type: httpUrl(),
    default: "",
    defaultText: "(none: no link)",
    env: "CHARTER_WEBHOOK_INBOX_URL",
    description:
      "the approvals inbox's public base URL: webhook messages link each approval at `<webhookInboxUrl>/approvals/<id>`; unset, the inbox's own URL (`inboxPublicUrl`, else its bound address) when an inbox serves, else no link",
    reload: "restart",
  }),
} as const;
