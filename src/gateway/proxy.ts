import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  ResultSchema,
  type CallToolRequest,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { mcpCallKey } from "../interop/dialects/index.js";
import { forwardedArguments, takeArgumentsText } from "../interop/mcp-received.js";
import type { GatewayAuthority, GatewayCatalog } from "./authority.js";
import {
  DEFAULT_LISTING_LIMITS,
  freshListings,
  listUpstreamTools,
  type ListingLimits,
} from "./listing.js";
import { checkPins, type PinState } from "./pins.js";

/** What the gateway reports besides its MCP traffic (to stderr, and to the audit log once it exists). */
export interface GatewayEvents {
  /** An upstream tool no longer matches its catalog pin, or is listed twice: hidden and refused. */
  pinViolation(tool: string, problem: string): void;
  /** The upstream's tool listing could not be read within its limits: nothing shown or forwarded. */
  listingRefused(problem: string): void;
  /** A line for the operator. */
  log(line: string): void;
}

export interface GatewayOptions {
  readonly authority: GatewayAuthority;
  /** A connected client of the upstream MCP server. */
  readonly upstream: Client;
  readonly events: GatewayEvents;
  /** Bounds on the upstream's `tools/list`; DEFAULT_LISTING_LIMITS unless given. */
  readonly listing?: ListingLimits;
}

/**
 * The agent-facing MCP server of `charter mcp-gateway`: `tools/list` is the grant's view of the
 * tools the upstream really has (pinned ones only), `tools/call` is authorized before it reaches
 * the upstream, and everything else passes through unchanged in both directions.
 *
 * Pins are verified on every call: each `tools/call` re-lists the upstream (a listing begun after
 * the call arrived, shared by the calls that arrived meanwhile) and is refused unless the tool the
 * upstream serves now is listed once and matches its pin. An upstream that changes a tool without
 * `list_changed` gets no call for it; the agent is told its list changed.
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
  const listTools = freshListings(() =>
    listUpstreamTools(upstream, options.listing ?? DEFAULT_LISTING_LIMITS),
  );
  let catalog: GatewayCatalog | undefined;
  /** The tools last found exposable: a change is announced to the agent. */
  let shown: string | undefined;
  /** The problem last reported per refused tool name (reported again only when it changes). */
  const reported = new Map<string, string>();
  /** Approvals the upstream-bound calls were held for, by exact call: a retry uses its approval. */
  const held = new Map<string, string>();

  /**
   * The pins of the tools the upstream serves now: a fresh listing checked against the catalog
   * (fetched again when `fresh`, else the one last fetched), or why there are none.
   */
  async function currentPins(
    fresh: boolean,
  ): Promise<
    | { ok: true; catalog: GatewayCatalog; pins: Map<string, PinState> }
    | { ok: false; problem: string }
  > {
    const [cat, listing] = await Promise.all([
      !fresh && catalog !== undefined ? catalog : authority.catalog(),
      listTools(),
    ]);
    catalog = cat;
    if (!listing.ok) {
      events.listingRefused(listing.problem);
      announce("");
      return listing;
    }
    const pins = checkPins(listing.tools, cat.pins);
    for (const [name, state] of pins) {
      if (state.ok) reported.delete(name);
      else if (reported.get(name) !== state.problem) {
        reported.set(name, state.problem);
        events.pinViolation(name, state.problem);
      }
    }
    announce(
      [...pins]
        .filter(([, state]) => state.ok)
        .map(([name]) => name)
        .sort()
        .join("\n"),
    );
    return { ok: true, catalog: cat, pins };
  }

  /** Tells the agent to list again when the exposable tools changed since they were last found. */
  function announce(now: string): void {
    const before = shown;
    shown = now;
    if (before !== undefined && before !== now)
      server.sendToolListChanged().catch((err: unknown) => {
        events.log(
          `charter mcp-gateway: could not send tools/list_changed: ${(err as Error).message}`,
        );
      });
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
    const current = await currentPins(true);
    if (!current.ok)
      throw new McpError(
        ErrorCode.InternalError,
        `charter mcp-gateway: ${current.problem}; no tool is shown until the upstream lists its tools within the gateway's limits`,
      );
    return { tools: current.catalog.tools.filter((t) => current.pins.get(t.name)?.ok === true) };
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
      const current = await currentPins(false);
      if (!current.ok)
        return refusal(
          `Refused: ${current.problem}, so the tool cannot be checked against its pin. Nothing was forwarded.`,
        );
      const pin = current.pins.get(name);
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
  // The upstream's list_changed reaches the agent, who lists again; pins need no invalidation:
  // every call is checked against a fresh listing.
  upstream.fallbackNotificationHandler = async (notification) => server.notification(notification);
  events.log(
    `charter mcp-gateway: fronting ${upstream.getServerVersion()?.name ?? "the upstream server"}`,
  );
  return server;
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
