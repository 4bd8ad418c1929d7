import { isConfigError } from "../config/config-error.js";
import { helpRequested, helpText, type Command } from "./help.js";
import type { CliIo } from "./io.js";
import { UsageError } from "./options.js";
import {
  APPROVALS_SUBCOMMANDS,
  APPROVALS_USAGE,
  AUDIT_SUBCOMMANDS,
  AUDIT_USAGE,
  CATALOG_USAGE,
  CHECK_USAGE,
  CONFIG_FLAGS_USAGE,
  CONFIG_USAGE,
  ISSUE_USAGE,
  KEYS_SUBCOMMANDS,
  KEYS_USAGE,
  MCP_GATEWAY_USAGE,
  SERVE_USAGE,
  INIT_USAGE,
  REPLAY_USAGE,
  TEST_USAGE,
  ANALYZE_USAGE,
  DIFF_USAGE,
  VALIDATE_USAGE,
} from "./usage.js";

// A command's module is imported when it runs: `--help` and a usage error load none of them, and
// each command loads only what it uses (check needs neither the server nor the MCP SDK).

/** Every command of the CLI: the one list that dispatch, `--help` and the overview read. */
export const COMMANDS: Readonly<Record<string, Command>> = {
  serve: {
    summary: "serve the gRPC API (loopback only until an API key or mutual TLS is configured)",
    usage: SERVE_USAGE,
    run: async (args, io) => (await import("./commands/serve.js")).serveCommand(args, io),
  },
  init: {
    summary: "create a new, empty store on the data dir (refused when one is there)",
    usage: INIT_USAGE,
    run: async (args, io) => (await import("./commands/init.js")).initCommand(args, io),
  },
  issue: {
    summary: "compose a grant for --profile and print its token",
    usage: ISSUE_USAGE,
    run: async (args, io) => (await import("./commands/issue.js")).issueCommand(args, io),
  },
  catalog: {
    summary: "print the tool catalog of --token, rendered for a framework (--dialect)",
    usage: CATALOG_USAGE,
    run: async (args, io) => (await import("./commands/catalog.js")).catalogCommand(args, io),
  },
  check: {
    summary: "decide one call; exit 0 allow, 1 deny, 2 requires approval, 3 effect suppressed",
    usage: CHECK_USAGE,
    run: async (args, io) => (await import("./commands/check.js")).checkCommand(args, io),
  },
  test: {
    summary: "run policy test suites offline; exit 1 a case failed, 2 coverage below --threshold",
    usage: TEST_USAGE,
    run: async (args, io) => (await import("./commands/test.js")).testCommand(args, io),
  },
  replay: {
    summary: "decide the recorded decisions again under a candidate policy; print the flips",
    usage: REPLAY_USAGE,
    run: async (args, io) => (await import("./commands/replay.js")).replayCommand(args, io),
  },
  analyze: {
    summary:
      "find shadowed, redundant and never-callable rules, unmeetable approvals; exit 1 on --fail-on",
    usage: ANALYZE_USAGE,
    run: async (args, io) => (await import("./commands/analyze.js")).analyzeCommand(args, io),
  },
  diff: {
    summary: "compare two policy versions per profile and action; exit 0 equal, 1 anything differs",
    usage: DIFF_USAGE,
    run: async (args, io) => (await import("./commands/diff.js")).diffCommand(args, io),
  },
  validate: {
    summary: "load catalog and policy and report every problem",
    usage: VALIDATE_USAGE,
    run: async (args, io) => (await import("./commands/validate.js")).validateCommand(args, io),
  },
  config: {
    summary: "print the effective configuration: each value and its source, secrets redacted",
    usage: CONFIG_USAGE,
    run: async (args, io) => (await import("./commands/config.js")).configCommand(args, io),
  },
  keys: {
    summary: "manage API keys and signing keys, on the data dir",
    usage: KEYS_USAGE,
    subcommands: KEYS_SUBCOMMANDS,
    run: async (args, io) => (await import("./commands/keys.js")).keysCommand(args, io),
  },
  "mcp-gateway": {
    summary: "a stdio MCP proxy fronting an upstream MCP server with a grant",
    usage: MCP_GATEWAY_USAGE,
    run: async (args, io) =>
      (await import("./commands/mcp-gateway.js")).mcpGatewayCommand(args, io),
  },
  approvals: {
    summary: "list|show|approve|reject|watch an owner's approvals",
    usage: APPROVALS_USAGE,
    subcommands: APPROVALS_SUBCOMMANDS,
    run: async (args, io) => (await import("./commands/approvals.js")).approvalsCommand(args, io),
  },
  audit: {
    summary: "verify|export|tail the audit log (offline, on the data dir)",
    usage: AUDIT_USAGE,
    subcommands: AUDIT_SUBCOMMANDS,
    run: async (args, io) => (await import("./commands/audit.js")).auditCommand(args, io),
  },
};

const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length)) + 2;

/** The overview `charter --help` prints: every command of COMMANDS, then the common flags. */
export const USAGE = `usage: charter <command> [flags]    (charter <command> --help: that command's usage)

commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(width)}${command.summary}`)
  .join("\n")}

${CONFIG_FLAGS_USAGE}

exit codes besides check's: 64 usage error, 69 request refused, 78 configuration error,
70 internal error; audit verify exits 1 when the chain is broken`;

/** Runs the CLI and answers its exit code; never calls process.exit. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h") {
    io.out(USAGE);
    return name === undefined ? 64 : 0;
  }
  if (name === "help") return helpCommand(rest, io);
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    io.err(`unknown command "${name}"\n\n${USAGE}`);
    return 64;
  }
  // One mechanism for every command: --help / -h (before a `--`) prints the usage and runs nothing.
  if (helpRequested(rest)) {
    io.out(helpText(name, command, rest));
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`charter ${name}: ${err.message}\n\n${helpText(name, command, rest)}`);
      return 64;
    }
    // Imported here so that --help loads no application code; a command that ran has loaded it.
    const { isLoadError } = await import("../authority/index.js");
    if (isConfigError(err) || isLoadError(err)) {
      io.err(`charter ${name}: ${err.message}`);
      return 78;
    }
    io.err(`charter ${name}: internal error: ${err instanceof Error ? err.message : String(err)}`);
    return 70;
  }
}

/** `charter help [COMMAND [SUBCOMMAND]]`: the overview, or that command's usage. */
function helpCommand(args: readonly string[], io: CliIo): number {
  const [name, ...rest] = args;
  if (name === undefined) {
    io.out(USAGE);
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    io.err(`unknown command "${name}"\n\n${USAGE}`);
    return 64;
  }
  io.out(helpText(name, command, rest));
  return 0;
}
