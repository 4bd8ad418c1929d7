import { isLoadError } from "../authority/index.js";
import { isConfigError } from "../config/config.js";
import { APPROVALS_USAGE, approvalsCommand } from "./commands/approvals.js";
import { AUDIT_USAGE, auditCommand } from "./commands/audit.js";
import { catalogCommand } from "./commands/catalog.js";
import { checkCommand } from "./commands/check.js";
import { configCommand } from "./commands/config.js";
import { issueCommand } from "./commands/issue.js";
import { keysCommand } from "./commands/keys.js";
import { mcpGatewayCommand } from "./commands/mcp-gateway.js";
import { serveCommand } from "./commands/serve.js";
import { validateCommand } from "./commands/validate.js";
import type { CliIo } from "./io.js";
import { UsageError, configFlagsUsage } from "./options.js";

export const USAGE = `usage: charter <command> [flags]

commands:
  serve      serve the gRPC API (loopback only until an API key or mutual TLS is configured);
             --workers N server processes (default: one per core; 1 = a single process)
  issue      compose a grant for --profile and print its token
  catalog    print the tool catalog of --token (--dialect neutral|openai_chat|openai_responses|anthropic|mcp|gemini|langchain|pydantic_ai)
  check      decide one call offline: --token T | --profile P, --tool NAME | --action ID, --args JSON [--approval-id A]
             a target: --operation KIND [--node N --definition ID] | --agent NAME [--agent-version V --delegated-token T]
             a step: --run ID (--tool-call ID | --activation ID [--attempt N]); --call-id ID
             exit code: 0 allow, 1 deny, 2 requires approval, 3 effect suppressed
  validate   load catalog and policy and report every problem
  config     print the effective configuration: each setting's value and source, secrets redacted (--json)
  approvals  list|show|approve|reject|watch an owner's approvals
  audit      verify|export|tail the audit log (offline, on the data dir)
  keys       manage API keys (create, list, revoke) and signing keys (rotate-signing), on the data dir
  mcp-gateway  a stdio MCP proxy fronting an upstream MCP server with a grant:
             --token T [--server HOST:PORT [--api-key K]] (-- COMMAND ARGS... | --upstream-url URL)

${configFlagsUsage()}
  issue, catalog, check, approvals: --server HOST:PORT (CHARTER_SERVER) --api-key KEY (CHARTER_API_KEY)
  CHARTER_TOKEN stands in for --token

exit codes besides check's: 64 usage error, 69 request refused, 78 configuration error, 70 internal error;
audit verify exits 1 when the chain is broken

${APPROVALS_USAGE}

${AUDIT_USAGE}`;

const COMMANDS: Readonly<Record<string, (args: readonly string[], io: CliIo) => Promise<number>>> =
  {
    serve: serveCommand,
    issue: issueCommand,
    catalog: catalogCommand,
    check: checkCommand,
    validate: validateCommand,
    config: configCommand,
    keys: keysCommand,
    "mcp-gateway": mcpGatewayCommand,
    approvals: approvalsCommand,
    audit: auditCommand,
  };

/** Runs the CLI and answers its exit code; never calls process.exit. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    io.out(USAGE);
    return name === undefined ? 64 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`unknown command "${name}"\n\n${USAGE}`);
    return 64;
  }
  try {
    return await command(rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`charter ${name}: ${err.message}\n\n${USAGE}`);
      return 64;
    }
    if (isConfigError(err) || isLoadError(err)) {
      io.err(`charter ${name}: ${err.message}`);
      return 78;
    }
    io.err(`charter ${name}: internal error: ${err instanceof Error ? err.message : String(err)}`);
    return 70;
  }
}
