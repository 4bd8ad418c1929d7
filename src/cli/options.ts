import { parseArgs, type ParseArgsConfig } from "node:util";
import { resolveConfig, type CharterConfig } from "../config/config.js";

/** A usage mistake: printed with the command's help, exit code 64. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Flags every command that reads configuration accepts, mapped to config keys. */
export const CONFIG_FLAGS = {
  config: { type: "string" },
  listen: { type: "string" },
  "data-dir": { type: "string" },
  database: { type: "string" },
  catalog: { type: "string" },
  policy: { type: "string" },
  issuer: { type: "string" },
  audience: { type: "string" },
  "log-level": { type: "string" },
} as const satisfies ParseArgsConfig["options"];

type ConfigFlagValues = { [K in keyof typeof CONFIG_FLAGS]?: string | undefined };

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

/** The configuration from --config, the environment and the flags (flags win). */
export function configFrom(
  values: ConfigFlagValues,
  env: Readonly<Record<string, string | undefined>>,
): Promise<CharterConfig> {
  const overrides: Partial<Record<keyof CharterConfig, string>> = {};
  const map: Record<string, keyof CharterConfig> = {
    listen: "listen",
    "data-dir": "dataDir",
    database: "database",
    catalog: "catalog",
    policy: "policy",
    issuer: "issuer",
    audience: "audience",
    "log-level": "logLevel",
  };
  for (const [flag, key] of Object.entries(map)) {
    const value = values[flag as keyof ConfigFlagValues];
    if (value !== undefined) overrides[key] = value;
  }
  return resolveConfig({
    ...(values.config === undefined ? {} : { file: values.config }),
    env,
    overrides,
  });
}
