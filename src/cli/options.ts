import { parseArgs, type ParseArgsConfig } from "node:util";
import {
  CONFIG_FILE,
  SETTINGS,
  SETTING_NAMES,
  resolveSettings,
  type ResolvedConfig,
  type CharterConfig,
  type SettingFlag,
  type Setting,
  type SettingName,
} from "../config/config.js";

/** A usage mistake: printed with the command's help, exit code 64. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

type StringFlags<F extends string> = { readonly [K in F]: { readonly type: "string" } };

/** The settings' flags of `command` (undefined: of every command), from the settings' schema. */
function flagsOf<F extends string>(command: string | undefined): StringFlags<F> {
  const flags: Record<string, { readonly type: "string" }> = {
    [CONFIG_FILE.flag]: { type: "string" },
  };
  for (const name of SETTING_NAMES) {
    const { flag, flagCommand } = SETTINGS[name] as { flag?: string; flagCommand?: string };
    if (flag !== undefined && (flagCommand === undefined || flagCommand === command))
      flags[flag] = { type: "string" };
  }
  return flags as StringFlags<F>;
}

/** Flags every command that reads configuration accepts: `--config` and the settings' flags. */
export const CONFIG_FLAGS = flagsOf<typeof CONFIG_FILE.flag | SettingFlag>(undefined);

/** CONFIG_FLAGS and the settings' flags only `charter serve` takes (`--workers`). */
export const SERVE_CONFIG_FLAGS = flagsOf<typeof CONFIG_FILE.flag | SettingFlag<"serve">>("serve");

/** Words wrapped into lines of at most `width` characters, each after `indent`. */
function wrap(words: readonly string[], indent: string, width = 100): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of words) {
    if (line !== "" && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(indent + line);
  return lines;
}

/** The configuration flags and environment variables, from the schema, for the usage text. */
export function configFlagsUsage(): string {
  const flagged = SETTING_NAMES.map((name) => SETTINGS[name] as Setting<unknown>).filter(
    (s) => s.flag !== undefined,
  );
  const flag = (s: { flag?: string; flagValue?: string }) =>
    `--${s.flag ?? ""}${s.flagValue === undefined ? "" : ` ${s.flagValue}`}`;
  const common = flagged.filter((s) => s.flagCommand === undefined).map(flag);
  const only = flagged
    .filter((s) => s.flagCommand !== undefined)
    .map((s) => `${s.flagCommand ?? ""}: ${flag(s)}`);
  const env = flagged.map((s) => `${s.env},`);
  return [
    "configuration flags (all commands; every setting, its default and variable: docs/configuration.md):",
    ...wrap([flag(CONFIG_FILE), ...common, ...only.map((o) => `(${o})`)], "  "),
    ...wrap(["environment:", `${CONFIG_FILE.env},`, "one", "per", "setting:", ...env, "…"], "  "),
  ].join("\n");
}

/** Which setting each flag sets. */
const SETTING_OF_FLAG = new Map<string, SettingName>(
  SETTING_NAMES.flatMap((name) => {
    const flag = (SETTINGS[name] as { flag?: string }).flag;
    return flag === undefined ? [] : [[flag, name] as const];
  }),
);

type ConfigFlagValues = {
  readonly [K in string]?: string | boolean | (string | boolean)[] | undefined;
};

/** Parses a command's arguments strictly: an unknown flag or a stray argument is a usage error. */
export function parse<O extends NonNullable<ParseArgsConfig["options"]>>(
  args: readonly string[],
  options: O,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** The configuration and its sources from --config, the environment and the flags (flags win). */
export function resolvedFrom(
  values: ConfigFlagValues,
  env: Readonly<Record<string, string | undefined>>,
): Promise<ResolvedConfig> {
  const overrides: Partial<Record<SettingName, string>> = {};
  for (const [flag, name] of SETTING_OF_FLAG) {
    const value = values[flag];
    if (typeof value === "string") overrides[name] = value;
  }
  const file = values[CONFIG_FILE.flag];
  return resolveSettings({ ...(typeof file === "string" ? { file } : {}), env, overrides });
}

/** The configuration from --config, the environment and the flags (flags win). */
export async function configFrom(
  values: ConfigFlagValues,
  env: Readonly<Record<string, string | undefined>>,
): Promise<CharterConfig> {
  return (await resolvedFrom(values, env)).config;
}

/** A flag's value as a non-negative integer (undefined when the flag is not given). */
export function intFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a non-negative integer`);
  return Number(value);
}
