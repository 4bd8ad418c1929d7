import type { McpFeedback, McpTool } from "../interop/dialects/index.js";

/** What a verdict decided, as the gateway acts on it. */
export type GatewayDecision = "allow" | "deny" | "require_approval" | "effect_suppressed";

/** The grant's tools as MCP shows them, and the catalog's pin of each, by tool name. */
export interface GatewayCatalog {
  readonly tools: readonly McpTool[];
  /** Tool name -> the catalog descriptor's digest (`descriptorDigest`): what the upstream tool must match. */
  readonly pins: ReadonlyMap<string, string>;
}

/** One `tools/call` to authorize, with its JSON-RPC id (of its type). */
export interface GatewayCall {
  readonly id: string | number;
  readonly name: string;
  /** The arguments exactly as the agent sent them (JSON text; "" for none): what is authorized. */
  readonly argumentsJson: string;
  /** An approval to use: the one a previous identical call was held for. */
  readonly approvalId?: string;
}

/** A call's verdict as the gateway needs it: the decision, the approval it names, the MCP feedback. */
export interface GatewayVerdict {
  readonly decision: GatewayDecision;
  readonly approvalId?: string;
  /** The decision's id: an allowed call's result is reported under it. */
  readonly decisionId?: string;
  /** For a non-allowed call: the JSON-RPC response to answer with. */
  readonly feedback?: McpFeedback;
}

/**
 * Where the gateway's decisions come from: the application layer over a data dir (local mode) or
 * a Charter server (remote mode). Both speak the MCP dialect: GetCatalog and AuthorizeTurn, in the
 * gateway's run (one per gateway session unless the operator names one), and ReportResult.
 */
export interface GatewayAuthority {
  catalog(): Promise<GatewayCatalog>;
  authorizeCall(call: GatewayCall): Promise<GatewayVerdict>;
  /**
   * Reports an allowed call's result to its run (ReportResult): whether the upstream failed it,
   * and its structured content as JSON text ("" without one) for the catalog's rules over results.
   */
  reportResult(decisionId: string, failed: boolean, resultJson: string): Promise<void>;
}
