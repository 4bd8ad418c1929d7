import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { createAppContext } from "../../app/context.js";
import { GATEWAY_SETTINGS, resolveSomeSettings, type CharterConfig } from "../../config/config.js";
import { auditGatewayRefusal, MAX_STEP_ID_LENGTH } from "../../authority/index.js";
import { createGatewayServer } from "../../gateway/proxy.js";
import { GatewayStdioTransport } from "../../gateway/stdio-transport.js";
import type { GatewayAuthority } from "../../gateway/authority.js";
import type { ListingLimits } from "../../gateway/listing.js";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";
import { serverAddress, serverClients } from "../target.js";
import { localGatewayAuthority, remoteGatewayAuthority } from "../gateway-authority.js";

/**
 * `charter mcp-gateway [flags] -- COMMAND ARGS…` (or `--upstream-url URL`): a stdio MCP server
 * that fronts an upstream MCP server with a grant. Decides locally over the data dir's catalog and
 * policy, or asks the Charter server at --server (with --api-key). stdout is the MCP channel;
 * everything the gateway has to say goes to stderr. Runs until the agent closes stdin.
 */
export async function mcpGatewayCommand(args: readonly string[], io: CliIo): Promise<number> {
  const split = args.indexOf("--");
  const command = split < 0 ? [] : args.slice(split + 1);
  const { values } = parse(split < 0 ? args : args.slice(0, split), {
    ...CONFIG_FLAGS,
    token: { type: "string" },
    server: { type: "string" },
    "api-key": { type: "string" },
    "upstream-url": { type: "string" },
    run: { type: "string" },
  });
  // One run per gateway session unless the operator names one (a run spanning sessions).
  const runId = values.run ?? `mcp-${randomUUID()}`;
  if (runId === "" || runId.length > MAX_STEP_ID_LENGTH)
    throw new UsageError(`--run must be 1 to ${MAX_STEP_ID_LENGTH} characters`);
  const token = values.token ?? io.env["CHARTER_TOKEN"];
  if (!token) throw new UsageError("--token (or CHARTER_TOKEN) is required");
  const url = values["upstream-url"];
  if (command.length > 0 === (url !== undefined))
    throw new UsageError(
      "give the upstream MCP server as `-- COMMAND ARGS…` or as --upstream-url URL (one of them)",
    );

  const server = serverAddress(values.server, io, values["api-key"]);
  const closers: (() => Promise<void> | void)[] = [];
  let authority: GatewayAuthority;
  // Local mode writes a pinning refusal to the data dir's audit log too; remote mode has no RPC that
  // appends to a server's log (a gateway key that could write records could write misleading ones).
  let auditPin: ((tool: string, problem: string) => Promise<void>) | undefined;
  let listing: ListingLimits;
  if (server !== undefined) {
    // Remote mode reads only the gateway's own settings (the catalog and policy are the server's).
    const file = values.config;
    listing = listingLimits(
      await resolveSomeSettings(GATEWAY_SETTING_NAMES, {
        ...(file === undefined ? {} : { file }),
        env: io.env,
      }),
    );
    const clients = serverClients(server);
    closers.push(() => clients.close());
    authority = remoteGatewayAuthority(clients, token, runId);
  } else {
    if (values["api-key"] !== undefined)
      throw new UsageError("--api-key is for --server (remote mode)");
    const config = await configFrom(values, io.env);
    listing = listingLimits(config);
    const ctx = await createAppContext(config, { tokenCacheSize: 16 });
    closers.push(() => ctx.close());
    authority = localGatewayAuthority(ctx, token, runId);
    auditPin = (toolName, problem) => auditGatewayRefusal(ctx, { toolName, problem });
  }
  try {
    const upstream = new Client({ name: "charter-mcp-gateway", version: "0.1.0" });
    await upstream.connect(upstreamTransport(command, url));
    closers.unshift(() => upstream.close());
    const server = createGatewayServer({
      authority,
      upstream,
      listing,
      events: {
        pinViolation: (tool, problem) => {
          io.err(
            `charter mcp-gateway: tool pinning: ${problem}; "${tool}" is hidden and its calls are refused`,
          );
          auditPin?.(tool, problem).catch((err: unknown) =>
            io.err(
              `charter mcp-gateway: could not write the pinning refusal to the audit log: ${(err as Error).message}`,
            ),
          );
        },
        listingRefused: (problem) =>
          io.err(`charter mcp-gateway: ${problem}; no tool is shown and no call is forwarded`),
        log: (line) => io.err(line),
      },
    });
    const closed = new Promise<void>((resolve) => (server.onclose = resolve));
    upstream.onclose = () => void server.close();
    await server.connect(new GatewayStdioTransport());
    await closed;
    return 0;
  } finally {
    for (const close of closers) await close();
  }
}

const GATEWAY_SETTING_NAMES = Object.keys(GATEWAY_SETTINGS) as (keyof typeof GATEWAY_SETTINGS)[];

function listingLimits(config: Pick<CharterConfig, keyof typeof GATEWAY_SETTINGS>): ListingLimits {
  return {
    maxPages: config.gatewayMaxListPages,
    maxTools: config.gatewayMaxListTools,
    maxBytes: config.gatewayMaxListBytes,
    timeoutMs: config.gatewayListTimeoutMs,
  };
}

function upstreamTransport(command: readonly string[], url: string | undefined): Transport {
  if (url !== undefined) return new StreamableHTTPClientTransport(new URL(url));
  const [program, ...rest] = command as [string, ...string[]];
  return new StdioClientTransport({ command: program, args: rest, stderr: "inherit" });
}
