import {
  SETTINGS,
  SETTING_NAMES,
  type ResolvedConfig,
  type SettingName,
  type SettingSource,
} from "../../config/config.js";
import { redacted } from "../../config/redact.js";
import type { CliIo } from "../io.js";
import { SERVE_CONFIG_FLAGS, parse, resolvedFrom } from "../options.js";

export const CONFIG_USAGE = `usage: charter config [--json] [configuration flags]
  prints the effective configuration of the other commands (the same --config file, CHARTER_*
  environment and flags; --workers as charter serve takes it): every setting, its value and
  where it came from (default, file, env or flag). Secrets are redacted (the KEK, a database
  URL's password). --json prints one JSON object; an invalid configuration exits 78.`;

const FLAGS = {
  ...SERVE_CONFIG_FLAGS,
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** One setting as `charter config --json` prints it. */
export interface ShownSetting {
  /** The value (secrets redacted); null for an optional setting nothing set. */
  readonly value: unknown;
  readonly source: SettingSource["kind"];
  /** The file, environment variable or flag it came from; absent for a default. */
  readonly from?: string;
}

/** `charter config`: the effective configuration, each value with its source, secrets redacted. */
export async function configCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, FLAGS);
  if (values.help === true) {
    io.out(CONFIG_USAGE);
    return 0;
  }
  const resolved = await resolvedFrom(values, io.env);
  const shown = shownSettings(resolved);
  if (values.json === true) {
    io.out(JSON.stringify({ file: resolved.file ?? null, settings: shown }, null, 2));
    return 0;
  }
  const file = resolved.file;
  io.out(
    file === undefined
      ? "config file: (none)"
      : `config file: ${file.path} (${file.namedBy === "flag" ? "--config" : "CHARTER_CONFIG"})`,
  );
  const rows = SETTING_NAMES.map((name) => {
    const { value, source, from } = shown[name];
    return [name, valueText(value), from === undefined ? source : `${source} ${from}`] as const;
  });
  const nameWidth = Math.max(...rows.map((r) => r[0].length));
  const valueWidth = Math.max(...rows.map((r) => r[1].length));
  for (const [name, value, origin] of rows)
    io.out(`${name.padEnd(nameWidth)}  ${value.padEnd(valueWidth)}  ${origin}`);
  return 0;
}

/** Every setting's shown value and source, in the schema's order. */
export function shownSettings(resolved: ResolvedConfig): Record<SettingName, ShownSetting> {
  const config = resolved.config as Readonly<Record<SettingName, unknown>>;
  const out = {} as Record<SettingName, ShownSetting>;
  for (const name of SETTING_NAMES) {
    const source = resolved.sources[name] ?? { kind: "default" };
    const value = redacted(config[name], SETTINGS[name].secret) ?? null;
    out[name] = { value, source: source.kind, ...fromOf(source) };
  }
  return out;
}

function fromOf(source: SettingSource): { from?: string } {
  switch (source.kind) {
    case "default":
      return {};
    case "file":
      return { from: source.file };
    case "env":
    case "flag":
      return { from: source.name };
  }
}

/** A value as the text form prints it: strings quoted only when empty, absent as `(none)`. */
function valueText(value: unknown): string {
  if (value === null) return "(none)";
  if (value === "") return '""';
  return typeof value === "string" ? value : JSON.stringify(value);
}
