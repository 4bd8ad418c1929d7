import type { Approval } from "../core/approval.js";
import {
  approveRole,
  directoryRoles,
  isApproveRole,
  isDirectoryApprover,
  type ApproverDirectory,
} from "../core/approvers.js";
import type { Actor } from "./approvals.js";
import { AuthorityError, invalidRequest } from "./errors.js";

// Who may see an approval: an admin, its owner, or an approver of its requirement for its owner
// (by key or by the approver directory). Every approval read and answer is filtered by it.

/**
 * The owner a request is about: the actor's own unless they are an admin or an approver (an
 * `approve:<requirement>` role, or a principal of the directory: then any owner, the answer
 * filtered by {@link visible}); without an actor the request must name one.
 */
export function ownerFor(
  owner: string,
  actor: Actor | undefined,
  directory: ApproverDirectory | undefined,
): string | undefined {
  const wide =
    actor !== undefined &&
    (actor.roles.includes("admin") ||
      actor.roles.some(isApproveRole) ||
      isDirectoryApprover(directory, actor.principal));
  if (owner === "") {
    if (actor === undefined) throw invalidRequest("owner", "is required");
    return wide ? undefined : actor.principal;
  }
  if (actor === undefined || wide || actor.principal === owner) return owner;
  throw notYours();
}

/**
 * Whether `actor` may see `approval`: an admin, its owner, or a holder of its requirement's role
 * (a key's, or the directory's for the approval's owner).
 */
export function visible(
  approval: Pick<Approval, "owner" | "requirement">,
  actor: Actor | undefined,
  directory: ApproverDirectory | undefined,
): boolean {
  if (actor === undefined || actor.roles.includes("admin") || actor.principal === approval.owner)
    return true;
  const role = approveRole(approval.requirement);
  return (
    actor.roles.includes(role) ||
    directoryRoles(directory, actor.principal, approval.owner).includes(role)
  );
}

export function notYours(): AuthorityError {
  return new AuthorityError(
    "PERMISSION_DENIED",
    "you may only see and decide your own approvals and those of requirements you hold approve:<requirement> for (by key or in the approver directory)",
  );
}
