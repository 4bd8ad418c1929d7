import { randomUUID } from "node:crypto";
import {
  authorizeTurn,
  catalogFor,
  reportResult,
  type AuthorityContext,
} from "../authority/index.js";
import { ResultOutcome } from "../gen/charter/v1/authority_pb.js";
import type { CharterClients } from "../client/index.js";
import { Dialect } from "../gen/charter/v1/common_pb.js";
import type { McpFeedback, McpToolList } from "../interop/dialects/index.js";
import { decisionFromProto } from "../interop/enums.js";
import type { GatewayAuthority, GatewayCall, GatewayVerdict } from "../gateway/authority.js";

/**
 * The call as the MCP turn AuthorizeTurn reads: a JSON-RPC `tools/call` request with its id, its
 * arguments as a JSON string holding the text the agent sent (the MCP codec hands a string's text
 * on unchanged), so that what is decided is exactly what the agent wrote. Its id is the gateway's
 * own count of the session's calls, the call's step in the run: an agent may reuse a JSON-RPC id
 * once its request is answered, and the next call under it is a new call, not a retry.
 */
function turnOf(call: GatewayCall, callId: string): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: callId,
    method: "tools/call",
    params: {
      name: call.name,
      ...(call.argumentsJson === "" ? {} : { arguments: call.argumentsJson }),
    },
  });
}

/** The gateway's calls in its run: each gets the next step id of this session (a run named with --run spans sessions). */
function stepIds(): () => string {
  const session = randomUUID();
  let n = 0;
  return () => `mcp-${session}-${++n}`;
}

/** Local mode: the application layer over the data dir (the catalog and policy files in force). */
export function localGatewayAuthority(
  ctx: AuthorityContext,
  grantToken: string,
  runId: string,
): GatewayAuthority {
  const next = stepIds();
  return {
    async catalog() {
      const { view, tools } = await catalogFor(ctx, { grantToken, dialect: "mcp", runId });
      return {
        tools: (tools as McpToolList).tools,
        pins: new Map(view.tools.map((t) => [t.name, t.descriptorDigest])),
      };
    },
    async authorizeCall(call) {
      const callId = next();
      const approvalIds = new Map(call.approvalId === undefined ? [] : [[callId, call.approvalId]]);
      const { calls } = await authorizeTurn(ctx, {
        grantToken,
        dialect: "mcp",
        turnJson: turnOf(call, callId),
        approvalIds,
        runId,
      });
      const answer = calls[0];
      if (!answer) throw new Error("AuthorizeTurn answered no verdict for the call");
      const v = answer.decided.verdict;
      return verdictOf(
        v.decision,
        v.approvalId,
        answer.feedback as McpFeedback | undefined,
        answer.decided.decisionId,
      );
    },
    async reportResult(decisionId, failed, resultJson) {
      await reportResult(ctx, { grantToken, runId, decisionId, failed, labels: [], resultJson });
    },
  };
}

/** Remote mode: a Charter server (GetCatalog and AuthorizeTurn in the MCP dialect). */
export function remoteGatewayAuthority(
  clients: CharterClients,
  grantToken: string,
  runId: string,
): GatewayAuthority {
  const next = stepIds();
  return {
    async catalog() {
      const { view, renderedToolsJson } = await clients.catalog.getCatalog({
        grantToken,
        dialect: Dialect.MCP,
        runId,
      });
      return {
        tools: (JSON.parse(renderedToolsJson) as McpToolList).tools,
        pins: new Map((view?.tools ?? []).map((t) => [t.name, t.descriptorDigest])),
      };
    },
    async authorizeCall(call) {
      const callId = next();
      const approvalIds = call.approvalId === undefined ? {} : { [callId]: call.approvalId };
      const res = await clients.authority.authorizeTurn({
        grantToken,
        dialect: Dialect.MCP,
        turnJson: turnOf(call, callId),
        approvalIds,
        runId,
      });
      const v = res.verdicts[0];
      const decision = v ? decisionFromProto(v.decision) : undefined;
      // A verdict this version cannot read is never an allow.
      if (!v || decision === undefined) return { decision: "deny" };
      const feedback = res.feedbackJson[0];
      return verdictOf(
        decision,
        v.approvalId,
        feedback ? (JSON.parse(feedback) as McpFeedback) : undefined,
        v.decisionId,
      );
    },
    async reportResult(decisionId, failed, resultJson) {
      await clients.authority.reportResult({
        grantToken,
        runId,
        decisionId,
        outcome: failed ? ResultOutcome.FAILED : ResultOutcome.SUCCEEDED,
        resultJson,
      });
    },
  };
}

function verdictOf(
  decision: GatewayVerdict["decision"],
  approvalId: string | undefined,
  feedback: McpFeedback | undefined,
  decisionId: string,
): GatewayVerdict {
  return {
    decision,
    ...(decisionId === "" ? {} : { decisionId }),
    ...(approvalId === undefined || approvalId === "" ? {} : { approvalId }),
    ...(feedback === undefined ? {} : { feedback }),
  };
}
