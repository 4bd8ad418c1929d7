import { ACTION_ID } from "./catalog.js";
import type { Policy } from "./policy.js";

/**
 * Who may answer an approval (pure). A requirement's approvals count only from callers holding
 * its role, `approve:<requirement>` (`approve:manager`); the grant's owner counts only when the
 * requirement allows the owner: always for the requirement `owner`, for another only when the
 * policy says `owner: true` for it. Holding `admin` alone approves nothing. One rejection
 * rejects: it may come from whoever may approve, and from the owner.
 */
export const APPROVE_ROLE_PREFIX = "approve:";

/** The role that approves calls held for `requirement`. */
export function approveRole(requirement: string): `approve:${string}` {
  return `${APPROVE_ROLE_PREFIX}${requirement}`;
}

/** Whether `role` is a well-formed `approve:<requirement>` role. */
export function isApproveRole(role: string): role is `approve:${string}` {
  return (
    role.startsWith(APPROVE_ROLE_PREFIX) && ACTION_ID.test(role.slice(APPROVE_ROLE_PREFIX.length))
  );
}

/** Whether the grant's owner counts as an approver of `requirement` under `policy`. */
export function ownerMayApprove(
  policy: Pick<Policy, "ownerApproves">,
  requirement: string,
): boolean {
  return requirement === "owner" || policy.ownerApproves?.has(requirement) === true;
}

/** Who answers: a principal and its roles; `operator` when no identity is known (protected mode, offline CLI). */
export interface Answerer {
  readonly principal: string;
  readonly roles: readonly string[];
  /** Anyone on the machine, naming the approver: it holds every `approve:` role, but is not the owner. */
  readonly operator?: boolean;
}

/** Why `who` may not give `outcome` on an approval of `requirement` owned by `owner`; undefined when it may. */
export function answerProblem(
  policy: Pick<Policy, "ownerApproves">,
  approval: { readonly id: string; readonly owner: string; readonly requirement: string },
  who: Answerer,
  outcome: "approve" | "reject",
): string | undefined {
  const role = approveRole(approval.requirement);
  const isOwner = who.principal === approval.owner;
  if (isOwner && (outcome === "reject" || ownerMayApprove(policy, approval.requirement)))
    return undefined;
  if (isOwner && who.operator === true)
    return `the owner does not count as an approver of requirement "${approval.requirement}"; approval ${approval.id} needs holders of the role ${role}`;
  if (who.operator === true || who.roles.includes(role)) return undefined;
  const owner = ownerMayApprove(policy, approval.requirement) ? " (or the owner)" : "";
  return `answering approval ${approval.id} needs the role ${role}${owner}; admin alone does not approve`;
}
