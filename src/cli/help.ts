import type { CliIo } from "./io.js";
import { CONFIG_FLAGS_USAGE } from "./usage.js";

/** One command of the CLI: its line in the overview, its usage, and the function that runs it. */
export interface Command {
  /** One line for the overview `charter --help` prints. */
  readonly summary: string;
  /** What `charter <command> --help` prints (above the configuration flags). */
  readonly usage: string;
  /** The usage of each subcommand, printed by `charter <command> <subcommand> --help`. */
  readonly subcommands?: Readonly<Record<string, string>>;
  readonly run: (args: readonly string[], io: CliIo) => Promise<number>;
}

/** The flags that ask for a command's usage instead of running it. */
export const HELP_FLAGS: readonly string[] = ["--help", "-h"];

/**
 * Whether the arguments ask for help: a `--help` or `-h` before the `--` that ends the flags
 * (what follows `--` belongs to another program, as in `charter mcp-gateway -- server --help`).
 */
export function helpRequested(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((arg) => HELP_FLAGS.includes(arg));
}

/**
 * The usage of `charter <name>`, or of its subcommand when the arguments name one (the first
 * argument that is a subcommand's name), followed by the configuration flags.
 */
export function helpText(name: string, command: Command, args: readonly string[]): string {
  const subcommands = command.subcommands ?? {};
  const sub = args.find((arg) => Object.hasOwn(subcommands, arg));
  const usage = sub === undefined ? command.usage : (subcommands[sub] ?? command.usage);
  const more = sub === undefined ? "" : `\n\n(charter ${name} --help: every subcommand)`;
  // Continuation lines and further synopses line up under the first, after "usage: ".
  const [first, ...rest] = usage.split("\n");
  const lines = [`usage: ${first ?? ""}`, ...rest.map((line) => `       ${line}`)];
  return `${lines.join("\n")}${more}\n\n${CONFIG_FLAGS_USAGE}`;
}
