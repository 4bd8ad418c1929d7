import type { Catalog } from "./catalog.js";
import { decide, type DecideContext } from "./decide.js";
import type { TaskGrant } from "./grant.js";
import type { Policy } from "./policy.js";
import type { ToolCall, Verdict } from "./verdict.js";

/**
 * What the policy in force has withdrawn from a grant issued under an earlier one (the kill
 * switch): the whole grant, when a source it came from is suspended or gone; or single actions,
 * when an active global source, or one of the grant's own sources, now denies them. Only
 * tightening is read from the policy: nothing here can add to what the grant holds.
 */
export interface Withdrawal {
  /** Why the whole grant no longer stands; undefined when it does. */
  readonly grant?: string;
  /** Action id -> the source that now denies it. */
  readonly actions: ReadonlyMap<string, string>;
}

/** Why the policy no longer backs the grant at all, or undefined. */
export function grantWithdrawal(grant: TaskGrant, policy: Policy): string | undefined {
  for (const id of grant.sources) {
    const source = policy.sources.get(id);
    if (source === undefined) return `source "${id}" is no longer in the policy`;
    if (source.status === "suspended") return `source "${id}" is suspended`;
  }
  return undefined;
}

/** The withdrawal the policy in force makes from `grant`. */
export function withdrawal(grant: TaskGrant, policy: Policy): Withdrawal {
  const why = grantWithdrawal(grant, policy);
  const actions = new Map<string, string>();
  for (const source of policy.sources.values()) {
    const applies = source.status === "active" && (source.global || grant.sources.includes(source.id));
    if (!applies) continue;
    for (const actionId of source.deny) if (!actions.has(actionId)) actions.set(actionId, source.id);
  }
  return why === undefined ? { actions } : { grant: why, actions };
}

/** The grant as the policy in force leaves it: withdrawn actions are no longer allowed or approvable. */
export function withoutWithdrawn(grant: TaskGrant, w: Withdrawal): TaskGrant {
  const keep = (ids: readonly string[]) => ids.filter((id) => !w.actions.has(id));
  return { ...grant, allowed: keep(grant.allowed), approvalRequired: keep(grant.approvalRequired) };
}

/**
 * `decide` under the policy in force: a grant the policy no longer backs is denied
 * POLICY_WITHDRAWN before anything else is looked at; a verdict that is not already a deny, for
 * an action the policy now denies, becomes deny POLICY_WITHDRAWN. A deny is never turned into
 * anything else.
 */
export function decideInForce(grant: TaskGrant, catalog: Catalog, policy: Policy, call: ToolCall, ctx: DecideContext): Verdict {
  const w = withdrawal(grant, policy);
  if (w.grant !== undefined) {
    return {
      decision: "deny",
      reason: { code: "POLICY_WITHDRAWN", message: `The authority behind this task's grant has been withdrawn (${w.grant}). Stop making tool calls and report back.` },
      callId: call.callId,
      actionId: "",
      toolName: call.toolName ?? "",
      callDigest: "",
    };
  }
  const verdict = decide(grant, catalog, call, ctx);
  const source = w.actions.get(verdict.actionId);
  if (verdict.decision === "deny" || source === undefined) return verdict;
  const { requirement: _r, approvalId: _a, ...rest } = verdict;
  return {
    ...rest,
    decision: "deny",
    reason: { code: "POLICY_WITHDRAWN", message: `The tool "${verdict.toolName.slice(0, 80)}" has been withdrawn from this task by policy. Do not call it again.` },
  };
}
