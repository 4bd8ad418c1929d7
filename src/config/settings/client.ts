import type { SecretKind } from "./setting.js";

/**
 * A setting of the commands that can send their request to a running server: a flag or an
 * environment variable (the flag wins), never the config file; not part of `CharterConfig`.
 */
export interface ClientSetting {
  readonly env: string;
  /** The command-line flag, without `--`. */
  readonly flag: string;
  /** What the flag's value is, in usage texts. */
  readonly flagValue: string;
  readonly description: string;
  readonly secret?: SecretKind;
}

/** The commands that take the client settings. */
export const CLIENT_COMMANDS = ["issue", "catalog", "check", "approvals", "mcp-gateway"] as const;

/** How the client commands reach a server and what they present to it. */
export const CLIENT_SETTINGS = {
  server: {
    env: "CHARTER_SERVER",
    flag: "server",
    flagValue: "HOST:PORT",
    description:
      "a running Charter server to send the request to; unset: the command works offline on the data dir",
  },
  apiKey: {
    env: "CHARTER_API_KEY",
    flag: "api-key",
    flagValue: "KEY",
    description: "the API key presented to `server` (`authorization: Bearer <key>`)",
    secret: "value",
  },
} as const satisfies Record<string, ClientSetting>;

/** A client setting's name. */
export type ClientSettingName = keyof typeof CLIENT_SETTINGS;
