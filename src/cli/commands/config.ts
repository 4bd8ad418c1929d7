import {
  CLIENT_COMMANDS,
  CLIENT_SETTINGS,
  CONFIG_FILE,
  SETTINGS,
  SETTING_NAMES,
  type ClientSettingName,
  type ResolvedConfig,
  type SettingName,
  type SettingSource,
} from "../../config/config.js";
import { redacted } from "../../config/redact.js";
import type { CliIo } from "../io.js";
import { SERVE_CONFIG_FLAGS, parse, resolvedFrom } from "../options.js";
import { SERVER_FLAGS } from "../target.js";

const FLAGS = {
  ...SERVE_CONFIG_FLAGS,
  ...SERVER_FLAGS,
  json: { type: "boolean" },
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
  const resolved = await resolvedFrom(values, io.env);
  const shown = shownSettings(resolved);
  const client = shownClientSettings(values, io.env);
  if (values.json === true) {
    io.out(JSON.stringify({ file: resolved.file ?? null, settings: shown, client }, null, 2));
    return 0;
  }
  const file = resolved.file;
  io.out(
    file === undefined
      ? "config file: (none)"
      : `config file: ${file.path} (${file.namedBy === "flag" ? `--${CONFIG_FILE.flag}` : CONFIG_FILE.env})`,
  );
  const rows = (shownSet: Record<string, ShownSetting>) =>
    Object.entries(shownSet).map(([name, it]) => {
      const origin = it.from === undefined ? it.source : `${it.source} ${it.from}`;
      return { name, value: valueText(it.value), origin };
    });
  const settingRows = rows(shown);
  const clientRows = rows(client);
  const all = [...settingRows, ...clientRows];
  const nameWidth = Math.max(...all.map((r) => r.name.length));
  const valueWidth = Math.max(...all.map((r) => r.value.length));
  const print = (r: { name: string; value: string; origin: string }) =>
    io.out(`${r.name.padEnd(nameWidth)}  ${r.value.padEnd(valueWidth)}  ${r.origin}`);
  settingRows.forEach(print);
  io.out(`client settings (${CLIENT_COMMANDS.join(", ")}):`);
  clientRows.forEach(print);
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

/** The client settings' shown values: the flag, else the environment variable (empty: unset). */
export function shownClientSettings(
  values: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
): Record<ClientSettingName, ShownSetting> {
  const out = {} as Record<ClientSettingName, ShownSetting>;
  for (const name of Object.keys(CLIENT_SETTINGS) as ClientSettingName[]) {
    const spec: { flag: string; env: string; secret?: "value" } = CLIENT_SETTINGS[name];
    const flag = values[spec.flag];
    const fromEnv = env[spec.env];
    const source: SettingSource =
      typeof flag === "string"
        ? { kind: "flag", name: `--${spec.flag}` }
        : fromEnv !== undefined && fromEnv !== ""
          ? { kind: "env", name: spec.env }
          : { kind: "default" };
    const value = typeof flag === "string" ? flag : source.kind === "env" ? fromEnv : null;
    out[name] = {
      value: redacted(value, spec.secret) ?? null,
      source: source.kind,
      ...fromOf(source),
    };
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
