import type { Catalog } from "./catalog.js";
import { assess, withCallDigest, type Assessment, type DecideContext } from "./decide.js";
import type { TaskGrant } from "./grant.js";
import { grantIndex } from "./grant-index.js";
import { policyDenials } from "./memo.js";
import type { AuthoritySource, Policy } from "./policy.js";
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
    const applies =
      source.status === "active" && (source.global || grant.sources.includes(source.id));
    if (!applies) continue;
    for (const actionId of source.deny)
      if (!actions.has(actionId)) actions.set(actionId, source.id);
  }
  return why === undefined ? { actions } : { grant: why, actions };
}

/** The grant as the policy in force leaves it: withdrawn actions are no longer allowed or approvable. */
export function withoutWithdrawn(grant: TaskGrant, w: Withdrawal): TaskGrant {
  const keep = (ids: readonly string[]) => ids.filter((id) => !w.actions.has(id));
  return { ...grant, allowed: keep(grant.allowed), approvalRequired: keep(grant.approvalRequired) };
}

/**
 * The active sources that deny each action, in policy order: built once per policy (a policy is
 * never changed once built; a reload replaces it), so that one call looks up its own action
 * instead of walking every source's deny list. Kept in `policyDenials` (`memo.ts`).
 */
function denialsOf(policy: Policy): ReadonlyMap<string, readonly AuthoritySource[]> {
  let byAction = policyDenials.get(policy);
  if (byAction === undefined) {
    const built = new Map<string, AuthoritySource[]>();
    for (const source of policy.sources.values()) {
      if (source.status !== "active") continue;
      for (const actionId of source.deny) {
        const list = built.get(actionId);
        if (list === undefined) built.set(actionId, [source]);
        else if (!list.includes(source)) list.push(source);
      }
    }
    byAction = built;
    policyDenials.set(policy, byAction);
  }
  return byAction;
}

/** The source of the policy in force that withdraws `actionId` from `grant` (as `withdrawal(grant, policy).actions` would name it), or undefined. */
export function withdrawnBy(
  grant: TaskGrant,
  policy: Policy,
  actionId: string,
): string | undefined {
  const sources = denialsOf(policy).get(actionId);
  if (sources === undefined) return undefined;
  const own = grantIndex(grant).sources;
  return sources.find((source) => source.global || own.has(source.id))?.id;
}

/**
 * `decide` under the policy in force: a grant the policy no longer backs is denied
 * POLICY_WITHDRAWN before anything else is looked at; a verdict that is not already a deny, for
 * an action the policy now denies, becomes deny POLICY_WITHDRAWN. A deny is never turned into
 * anything else.
 */
export function decideInForce(
  grant: TaskGrant,
  catalog: Catalog,
  policy: Policy,
  call: ToolCall,
  ctx: DecideContext,
): Verdict {
  return withCallDigest(assessInForce(grant, catalog, policy, call, ctx));
}

/** `decideInForce` without the call digest computed (see `assess`): the same verdict. Its cost does not grow with the grant, the catalog or the policy's deny lists. */
export function assessInForce(
  grant: TaskGrant,
  catalog: Catalog,
  policy: Policy,
  call: ToolCall,
  ctx: DecideContext,
): Assessment {
  const why = grantWithdrawal(grant, policy);
  if (why !== undefined) {
    return {
      verdict: {
        decision: "deny",
        reason: {
          code: "POLICY_WITHDRAWN",
          message: `The authority behind this task's grant has been withdrawn (${why}). Stop making tool calls and report back.`,
        },
        callId: call.callId,
        actionId: "",
        toolName: call.toolName ?? "",
      },
      callDigest: () => "",
      argumentsDigest: () => "",
    };
  }
  const assessed = assess(grant, catalog, call, ctx);
  const { verdict } = assessed;
  if (verdict.decision === "deny") return assessed;
  const source = withdrawnBy(grant, policy, verdict.actionId);
  if (source === undefined) return assessed;
  const { requirement: _r, approvalId: _a, ...rest } = verdict;
  return {
    ...assessed,
    verdict: {
      ...rest,
      decision: "deny",
      reason: {
        code: "POLICY_WITHDRAWN",
        message: `The tool "${verdict.toolName.slice(0, 80)}" has been withdrawn from this task by policy. Do not call it again.`,
      },
    },
  };
}
