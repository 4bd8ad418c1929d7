import { CONNECTION_SETTINGS } from "./connections.js";
import { GATEWAY_SETTINGS } from "./gateway.js";
import { INBOX_SETTINGS } from "./inbox.js";
import { LIMIT_SETTINGS } from "./limits.js";
import { NOTIFICATION_SETTINGS } from "./notifications.js";
import { PROCESS_SETTINGS } from "./processes.js";
import { SECURITY_SETTINGS } from "./security.js";
import { SERVICE_SETTINGS } from "./service.js";
import type { Setting } from "./setting.js";

export {
  CLIENT_COMMANDS,
  CLIENT_SETTINGS,
  type ClientSetting,
  type ClientSettingName,
} from "./client.js";
export { GATEWAY_SETTINGS } from "./gateway.js";
export { LOG_LEVELS, type LogLevel } from "./service.js";
export { MAX_TOKEN_BYTES_CEILING } from "./limits.js";
export type { SecretKind, Setting } from "./setting.js";

/**
 * Every setting of Charter, declared once, by group (the docs' sections), in the order the docs
 * list them. The config reader, the environment, the flags, `CharterConfig`, the docs' table and
 * `charter config` all derive from it.
 */
export const SETTING_GROUPS = [
  { title: "Service, store and identity", settings: SERVICE_SETTINGS },
  { title: "TLS and keys at rest", settings: SECURITY_SETTINGS },
  { title: "Limits and caches", settings: LIMIT_SETTINGS },
  { title: "Connections", settings: CONNECTION_SETTINGS },
  { title: "Processes, metrics and traces", settings: PROCESS_SETTINGS },
  { title: "MCP gateway", settings: GATEWAY_SETTINGS },
  { title: "Notifications", settings: NOTIFICATION_SETTINGS },
  { title: "Approvals inbox", settings: INBOX_SETTINGS },
] as const;

/** Every setting by its name (the config file key). */
export const SETTINGS = {
  ...SERVICE_SETTINGS,
  ...SECURITY_SETTINGS,
  ...LIMIT_SETTINGS,
  ...CONNECTION_SETTINGS,
  ...PROCESS_SETTINGS,
  ...GATEWAY_SETTINGS,
  ...NOTIFICATION_SETTINGS,
  ...INBOX_SETTINGS,
} as const;

/** A setting's name: its config file key. */
export type SettingName = keyof typeof SETTINGS;

/** The settings' names in declaration order. */
export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** The config file itself: named by a flag or an environment variable (the flag wins). */
export const CONFIG_FILE = { flag: "config", flagValue: "FILE", env: "CHARTER_CONFIG" } as const;

type ValueOf<S> = S extends Setting<infer T> ? T : never;
type OptionalName = {
  [K in SettingName]: (typeof SETTINGS)[K] extends { readonly optional: true } ? K : never;
}[SettingName];

/**
 * Everything `charter serve` needs, one key per setting (see SETTINGS for what each means).
 * Relative paths resolve against the working directory.
 */
export type CharterConfig = {
  readonly [K in Exclude<SettingName, OptionalName>]: ValueOf<(typeof SETTINGS)[K]>;
} & { readonly [K in OptionalName]?: Exclude<ValueOf<(typeof SETTINGS)[K]>, undefined> };

/**
 * The flag names (without `--`) of the settings that have one: of every command that reads
 * configuration, or (with `C`) of the one command `C`.
 */
export type SettingFlag<C extends string = never> = {
  [K in SettingName]: (typeof SETTINGS)[K] extends Setting<infer _T, infer F, infer Only>
    ? [Only] extends [never]
      ? F
      : Only extends C
        ? F
        : never
    : never;
}[SettingName];
