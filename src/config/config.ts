import { resolveSettings, type ConfigSources } from "./resolve.js";
import {
  SETTINGS,
  SETTING_NAMES,
  type CharterConfig,
  type Setting,
  type SettingName,
} from "./settings/index.js";

export { ConfigError, isConfigError } from "./config-error.js";
export { parseClientRoles } from "./client-roles.js";
export { parseSpiffeRoles, type SpiffeRoles } from "../core/spiffe-id.js";
export { isLoopback, parseListen } from "./listen-address.js";
export {
  resolveSettings,
  resolveSomeSettings,
  type ConfigSources,
  type ResolvedConfig,
  type SettingSource,
} from "./resolve.js";
export { requiresKek } from "./security-settings.js";
export {
  CLIENT_COMMANDS,
  CLIENT_SETTINGS,
  CONFIG_FILE,
  GATEWAY_SETTINGS,
  LOG_LEVELS,
  MAX_TOKEN_BYTES_CEILING,
  SETTINGS,
  SETTING_GROUPS,
  SETTING_NAMES,
  type CharterConfig,
  type ClientSettingName,
  type LogLevel,
  type Setting,
  type SettingFlag,
  type SettingName,
} from "./settings/index.js";

/** Every setting's default (all but `catalog` and `policy`, which have none, and the optional `database`). */
export const DEFAULTS = Object.fromEntries(
  SETTING_NAMES.flatMap((name) => {
    const value = (SETTINGS[name] as Setting<unknown>).default;
    return value === undefined ? [] : [[name, value]];
  }),
) as Omit<CharterConfig, "catalog" | "policy">;

/** Environment variables that override the config file, by setting name. */
export const ENV_KEYS = Object.fromEntries(
  SETTING_NAMES.map((name) => [name, SETTINGS[name].env]),
) as Readonly<Record<SettingName, string>>;

/**
 * Resolves the configuration: defaults, then the config file (YAML or JSON), then environment
 * variables, then explicit overrides (command-line flags). Every problem is reported at once.
 */
export async function resolveConfig(options: ConfigSources): Promise<CharterConfig> {
  return (await resolveSettings(options)).config;
}
