import { readFile } from "node:fs/promises";
import { isJsonObject } from "../core/json.js";
import { parseDocumentText } from "../load/documents.js";
import { ConfigError } from "./config-error.js";
import { securityProblems } from "./security-settings.js";
import {
  CONFIG_FILE,
  SETTINGS,
  SETTING_NAMES,
  type CharterConfig,
  type Setting,
  type SettingName,
} from "./settings/index.js";

/** Where a setting's value came from: its default, the config file, an environment variable or a flag. */
export type SettingSource =
  | { readonly kind: "default" }
  | { readonly kind: "file"; readonly file: string }
  | { readonly kind: "env"; readonly name: string }
  | { readonly kind: "flag"; readonly name: string };

/** What resolving the configuration found: the configuration, and where each value came from. */
export interface ResolvedConfig {
  readonly config: CharterConfig;
  /** One entry per setting; an optional setting nothing set is absent. */
  readonly sources: Readonly<Partial<Record<SettingName, SettingSource>>>;
  /** The config file read, and what named it; absent when none was. */
  readonly file?: { readonly path: string; readonly namedBy: "flag" | "env" };
}

/** Where the configuration comes from; later ones win (see resolveSettings). */
export interface ConfigSources {
  /** The config file (the `--config` flag); otherwise CHARTER_CONFIG names it. */
  file?: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** Values from command-line flags, by setting name; undefined entries are ignored. */
  overrides?: Partial<Record<SettingName, string | undefined>>;
}

const flagName = (name: SettingName): string => {
  const flag = (SETTINGS[name] as Setting<unknown>).flag;
  return flag === undefined ? name : `--${flag}`;
};

/**
 * Resolves the configuration: defaults, then the config file (YAML or JSON), then environment
 * variables (an empty one is ignored), then overrides (command-line flags). Every problem is
 * reported at once in one ConfigError; a config file that cannot be read or parsed is its own.
 */
export async function resolveSettings(options: ConfigSources): Promise<ResolvedConfig> {
  return resolveNamed(options, SETTING_NAMES);
}

/**
 * Only the settings `names`, resolved as resolveSettings does (the config file may hold any
 * setting): for a command that needs a few settings and none of the required ones, such as
 * `charter mcp-gateway --server`.
 */
export async function resolveSomeSettings<N extends SettingName>(
  names: readonly N[],
  options: ConfigSources,
): Promise<Pick<CharterConfig, N>> {
  return (await resolveNamed(options, names)).config;
}

async function resolveNamed(
  options: ConfigSources,
  names: readonly SettingName[],
): Promise<ResolvedConfig> {
  const raw = new Map<SettingName, { value: unknown; source: SettingSource }>();
  const problems: string[] = [];
  const put = (name: SettingName, value: unknown, source: SettingSource) =>
    raw.set(name, { value, source });
  for (const name of SETTING_NAMES) {
    const spec = SETTINGS[name] as Setting<unknown>;
    if (spec.default !== undefined) put(name, spec.default, { kind: "default" });
  }

  const envFile = options.env?.[CONFIG_FILE.env];
  const file = options.file ?? envFile;
  if (file !== undefined && file !== "") {
    for (const [key, value] of Object.entries(await readConfigFile(file))) {
      if (!Object.hasOwn(SETTINGS, key)) {
        problems.push(`${file}: unknown setting "${key}"`);
        continue;
      }
      const spec = SETTINGS[key as SettingName] as Setting<unknown>;
      if (spec.fileInstead !== undefined)
        problems.push(
          `${file}: "${key}" is a secret; set ${spec.env} or ${spec.fileInstead} instead`,
        );
      else put(key as SettingName, value, { kind: "file", file });
    }
  }
  for (const name of SETTING_NAMES) {
    const env = SETTINGS[name].env;
    const value = options.env?.[env];
    if (value !== undefined && value !== "") put(name, value, { kind: "env", name: env });
  }
  for (const [name, value] of Object.entries(options.overrides ?? {}) as [SettingName, unknown][])
    if (value !== undefined) put(name, value, { kind: "flag", name: flagName(name) });

  const values: Record<string, unknown> = {};
  const sources: Partial<Record<SettingName, SettingSource>> = {};
  for (const name of names) {
    const spec = SETTINGS[name] as Setting<unknown>;
    const given = raw.get(name);
    const parsed = spec.type.parse(given?.value, { key: name, env: spec.env });
    if (!parsed.ok) problems.push(parsed.problem);
    else if (parsed.value !== undefined && given !== undefined) {
      values[name] = parsed.value;
      sources[name] = given.source;
    }
  }
  problems.push(...securityProblems(values));
  if (problems.length > 0) throw new ConfigError(problems.join("\n"));
  const named = file === undefined || file === "" ? undefined : file;
  return {
    config: values as CharterConfig,
    sources,
    ...(named === undefined
      ? {}
      : { file: { path: named, namedBy: options.file === undefined ? "env" : "flag" } }),
  };
}

/** The config file's map of settings; a file that cannot be read or is not a map is a ConfigError. */
async function readConfigFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new ConfigError(
      `${file}: cannot read config file (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  const doc = parseDocumentText(text, file);
  if (!isJsonObject(doc)) throw new ConfigError(`${file}: a config file must be a map of settings`);
  return doc;
}
