import type { ApprovalLinkSettings } from "../authority/index.js";
import { parseListen, type CharterConfig } from "../config/config.js";
import type { Store } from "../store/index.js";

/** Where the running inbox was last bound, recorded in the store for the other processes on it. */
export const INBOX_URL_META = "inbox_url";

/** The inbox's base URL as links and the OIDC redirect need it; `bound` records the address once served. */
export interface InboxAddress extends ApprovalLinkSettings {
  /** The inbox serves at `url` (this process): remembered, and recorded for the CLI and the other workers. */
  bound(url: string): Promise<void>;
  baseUrl(): Promise<string | undefined>;
}

/** `http(s)://host:port` of a listen address, when it names one host and a fixed port. */
export function urlOfListen(listen: string, tls: boolean): string | undefined {
  const parsed = parseListen(listen);
  if (parsed === undefined || parsed.port === 0) return undefined;
  if (parsed.host === "0.0.0.0" || parsed.host === "::") return undefined;
  const host = parsed.host.includes(":") ? `[${parsed.host}]` : parsed.host;
  return `${tls ? "https" : "http"}://${host}:${parsed.port}`;
}

/**
 * The base URL, first found of: `inboxPublicUrl`; the `inboxListen` address when its port is
 * fixed; the address this process bound; the address recorded in the store by the process that
 * serves the inbox (another worker, or a server the offline CLI shares the data dir with).
 * Undefined when no inbox is configured.
 */
export function inboxAddress(
  config: Pick<CharterConfig, "inboxListen" | "inboxPublicUrl" | "inboxLinkTtlSeconds" | "tlsCert">,
  store: Pick<Store, "readMeta" | "writeMeta">,
): InboxAddress | undefined {
  if (config.inboxListen === "" && config.inboxPublicUrl === "") return undefined;
  const configured =
    config.inboxPublicUrl !== ""
      ? config.inboxPublicUrl.replace(/\/+$/, "")
      : urlOfListen(config.inboxListen, config.tlsCert !== "");
  const here: { url?: string } = {};
  return {
    ttlSeconds: config.inboxLinkTtlSeconds,
    async bound(url) {
      here.url = url;
      await store.writeMeta(INBOX_URL_META, url);
    },
    async baseUrl() {
      return configured ?? here.url ?? (await store.readMeta(INBOX_URL_META));
    },
  };
}
