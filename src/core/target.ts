import { isOperationKind, type AgentDefinition, type OperationDefinition } from "./action-kind.js";
import type { TaskGrant } from "./grant.js";
import type { ReasonCode } from "./verdict.js";

/**
 * What a call does once allowed, as the runtime names it. `unknown` stands for a target this
 * version cannot read (a newer client's kind, or none set): it is denied, never read as `tool`.
 * A graph operation's kind is kept as sent, so a kind this version does not know stays visible.
 */
export type Target =
  | { readonly kind: "tool" }
  | {
      readonly kind: "start_agent";
      readonly definitionName: string;
      readonly definitionVersion: string;
    }
  | {
      readonly kind: "graph_operation";
      readonly nodeName: string;
      readonly operationDefinitionId: string;
      readonly operationKind: string;
    }
  | { readonly kind: "unknown" };

/** A refusal of the call's target: the reason code and a message for the model or the graph runtime. */
export interface TargetRefusal {
  readonly code: Extract<
    ReasonCode,
    "TARGET_MISMATCH" | "UNKNOWN_TARGET_KIND" | "AGENT_NOT_DELEGATED"
  >;
  readonly message: string;
}

/** What the target check needs besides the grant and the action. */
export interface TargetContext {
  /** Unix seconds. */
  readonly now: number;
  /** The grant the shell verified for a start-agent call (from its delegated grant token), if any. */
  readonly delegatedGrant?: TaskGrant;
}

const TOOL: Target = { kind: "tool" };

/**
 * Checks a call's target against the action's declared kind (absent = invoke the tool): an
 * unknown kind is UNKNOWN_TARGET_KIND; a kind other than the action's, or another agent
 * definition or operation, is TARGET_MISMATCH; starting an agent needs a grant delegated from
 * the calling grant, valid now, or it is AGENT_NOT_DELEGATED. Undefined when the target stands.
 */
export function checkTarget(
  grant: TaskGrant,
  action: TargetedAction,
  target: Target | undefined,
  ctx: TargetContext,
): TargetRefusal | undefined {
  const t = target ?? TOOL;
  if (t.kind === "unknown" || (t.kind === "graph_operation" && !isOperationKind(t.operationKind))) {
    return {
      code: "UNKNOWN_TARGET_KIND",
      message:
        "The call's target is of a kind Charter does not know; it is refused. Nothing may run.",
    };
  }
  const mismatch = (what: string): TargetRefusal => ({
    code: "TARGET_MISMATCH",
    message: `The action "${action.id}" ${what}; the call's target does not match it.`,
  });
  const { operation: op, agent } = action;
  if (op !== undefined) {
    if (t.kind !== "graph_operation") return mismatch(`is a graph operation (${op.kind})`);
    if (t.operationKind !== op.kind)
      return mismatch(`is a graph operation of kind ${op.kind}, not ${t.operationKind}`);
    return t.operationDefinitionId === op.definition
      ? undefined
      : mismatch("runs another operation definition");
  }
  if (agent !== undefined) {
    if (t.kind !== "start_agent") return mismatch("starts an agent");
    if (
      t.definitionName !== agent.name ||
      (agent.version !== undefined && t.definitionVersion !== agent.version)
    ) {
      return mismatch(
        `starts the agent ${agent.name}${agent.version === undefined ? "" : `@${agent.version}`}`,
      );
    }
    return delegatedFor(grant, ctx);
  }
  return t.kind === "tool" ? undefined : mismatch("invokes a tool");
}

/** What the check reads of a catalog action: an operation or agent declaration, or neither (a tool action). */
export interface TargetedAction {
  readonly id: string;
  readonly agent?: AgentDefinition;
  readonly operation?: OperationDefinition;
}

/** A sub-agent starts only under a grant delegated from the caller's (so its authority narrows the caller's), valid now. */
function delegatedFor(grant: TaskGrant, ctx: TargetContext): TargetRefusal | undefined {
  const child = ctx.delegatedGrant;
  if (child === undefined || child.parentId !== grant.id) {
    return {
      code: "AGENT_NOT_DELEGATED",
      message:
        "Starting this agent needs a grant delegated from this task's grant (DelegateGrant); none was presented. Do not start it.",
    };
  }
  if (!(ctx.now >= child.issuedAt && ctx.now < child.expiresAt)) {
    return {
      code: "AGENT_NOT_DELEGATED",
      message: "The grant delegated for this agent is not valid at this time. Do not start it.",
    };
  }
  return undefined;
}
