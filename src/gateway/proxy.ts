import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  ListToolsResultSchema,
  McpError,
  ResultSchema,
  type CallToolRequest,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { mcpCallKey } from "../interop/dialects/index.js";
import { forwardedArguments, takeArgumentsText } from "../interop/mcp-received.js";
import type { GatewayAuthority } from "./authority.js";
import { checkPins, type PinState } from "./pins.js";

/** What the gateway reports besides its MCP traffic (to stderr, and to the audit log once it exists). */
export interface GatewayEvents {
  /** An upstream tool no longer matches its catalog pin: hidden and refused. */
  pinViolation(tool: string, problem: string): void;
  /** A line for the operator. */
  log(line: string): void;
}

export interface GatewayOptions {
  readonly authority: GatewayAuthority;
  /** A connected client of the upstream MCP server. */
  readonly upstream: Client;
  readonly events: GatewayEvents;
}

/**
 * The agent-facing MCP server of `charter mcp-gateway`: `tools/list` is the grant's view of the
 * tools the upstream really has (pinned ones only), `tools/call` is authorized before it reaches
 * the upstream, and everything else passes through unchanged in both directions.
 */
// The SDK marks the low-level `Server` deprecated in favour of `McpServer`, "except for advanced use
// cases": a proxy is one (McpServer.registerTool needs zod schemas; the catalog has JSON Schema).
// eslint-disable-next-line @typescript-eslint/no-deprecated
export function createGatewayServer(options: GatewayOptions): Server {
  const { authority, upstream, events } = options;
  const capabilities = { ...upstream.getServerCapabilities(), tools: { listChanged: true } };
  const instructions = upstream.getInstructions();
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- see above
  const server = new Server(
    { name: "charter-mcp-gateway", version: "0.1.0" },
    { capabilities, ...(instructions === undefined ? {} : { instructions }) },
  );
  let pins: Map<string, PinState> | undefined;
  const reported = new Set<string>();
  /** Approvals the upstream-bound calls were held for, by exact call: a retry uses its approval. */
  const held = new Map<string, string>();

  async function refreshPins(): Promise<{
    catalog: Awaited<ReturnType<GatewayAuthority["catalog"]>>;
    upstreamTools: Tool[];
  }> {
    const [catalog, upstreamTools] = await Promise.all([authority.catalog(), listAll(upstream)]);
    pins = checkPins(upstreamTools, catalog.pins);
    for (const [name, state] of pins) {
      if (state.ok) reported.delete(name);
      else if (!reported.has(name)) {
        reported.add(name);
        events.pinViolation(name, state.problem);
      }
    }
    return { catalog, upstreamTools };
  }

  /**
   * Reports a relayed result to the run. A report that cannot be made is logged and the result
   * still goes back: a missing report never makes the run more trusted (the static labels stand).
   */
  async function report(
    decisionId: string | undefined,
    failed: boolean,
    result?: CallToolResult,
  ): Promise<void> {
    if (decisionId === undefined) return;
    const content = result?.structuredContent;
    try {
      await authority.reportResult(
        decisionId,
        failed,
        content === undefined ? "" : JSON.stringify(content),
      );
    } catch (err) {
      events.log(
        `charter mcp-gateway: could not report the result of ${decisionId}: ${(err as Error).message}`,
      );
    }
  }

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const { catalog } = await refreshPins();
    return { tools: catalog.tools.filter((t) => pins?.get(t.name)?.ok === true) };
  });

  server.setRequestHandler(
    CallToolRequestSchema,
    async (request, extra): Promise<CallToolResult> => {
      const { name, arguments: args } = request.params;
      const sent = takeArgumentsText(request.params);
      if (sent === undefined)
        throw new McpError(
          ErrorCode.InvalidParams,
          "the call's arguments arrived without their text",
        );
      if (pins === undefined) await refreshPins();
      const pin = pins?.get(name);
      if (pin && !pin.ok)
        return refusal(
          `Refused: ${pin.problem}. The gateway hides it until the upstream serves the tool the catalog describes.`,
        );
      const key = mcpCallKey(name, args);
      const approvalId = held.get(key);
      const verdict = await authority.authorizeCall({
        id: extra.requestId,
        name,
        argumentsJson: sent.argumentsJson,
        ...(approvalId === undefined ? {} : { approvalId }),
      });
      if (verdict.decision === "allow") {
        held.delete(key);
        if (pin === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
        let result: CallToolResult;
        try {
          result = await upstream.request(
            { method: "tools/call", params: forwardedParams(sent) },
            CallToolResultSchema,
            { signal: extra.signal },
          );
        } catch (err) {
          await report(verdict.decisionId, true);
          throw err;
        }
        await report(verdict.decisionId, result.isError === true, result);
        return result;
      }
      if (verdict.decision === "require_approval" && verdict.approvalId !== undefined)
        held.set(key, verdict.approvalId);
      const feedback = verdict.feedback;
      if (!feedback) return refusal("Refused: Charter gave no reason.");
      if ("error" in feedback) throw new McpError(feedback.error.code, feedback.error.message);
      return feedback.result;
    },
  );

  // Everything else, both ways, unchanged.
  server.fallbackRequestHandler = async (request, extra) =>
    upstream.request(
      { method: request.method, ...(request.params ? { params: request.params } : {}) },
      ResultSchema,
      { signal: extra.signal },
    );
  server.fallbackNotificationHandler = async (notification) => upstream.notification(notification);
  upstream.fallbackNotificationHandler = async (notification) => {
    if (notification.method === "notifications/tools/list_changed") pins = undefined;
    await server.notification(notification);
  };
  events.log(
    `charter mcp-gateway: fronting ${upstream.getServerVersion()?.name ?? "the upstream server"}`,
  );
  return server;
}

/** Every tool the upstream lists, following pagination. */
async function listAll(upstream: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await upstream.request(
      { method: "tools/list", ...(cursor === undefined ? {} : { params: { cursor } }) },
      ListToolsResultSchema,
    );
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/**
 * What goes upstream for an allowed call: its params with the arguments that were authorized,
 * read from the very text Charter decided on (allowed, so it parses strictly).
 */
function forwardedParams(sent: NonNullable<ReturnType<typeof takeArgumentsText>>): CallToolParams {
  if (sent.argumentsJson === "") return sent.upstreamParams as CallToolParams;
  const args = forwardedArguments(sent.argumentsJson);
  if (args === undefined)
    throw new McpError(ErrorCode.InvalidParams, "the allowed call's arguments cannot be forwarded");
  return { ...sent.upstreamParams, arguments: args } as CallToolParams;
}

type CallToolParams = CallToolRequest["params"];

function refusal(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
