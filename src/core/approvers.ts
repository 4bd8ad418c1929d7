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

/**
 * The deployment's approver directory: principals and the requirements they approve
 * (`approve:<requirement>` roles), each for every owner or only for some owners and teams. A
 * key's or session's principal holds its directory roles beside the key's own.
 */
export interface ApproverDirectory {
  readonly approvers: ReadonlyMap<string, DirectoryEntry>;
  /** A team's members: the owners whose approvals a team-scoped approver answers. */
  readonly teams: ReadonlyMap<string, ReadonlySet<string>>;
}

/** One approver of the directory. */
export interface DirectoryEntry {
  readonly roles: readonly `approve:${string}`[];
  /** Owners it approves for; with `teams` also absent, every owner. */
  readonly owners?: readonly string[];
  /** Teams whose members' approvals it answers. */
  readonly teams?: readonly string[];
  /** The chat user (Slack) that stands for it, for interactive answers. */
  readonly slackUserId?: string;
}

/** The `approve:` roles the directory gives `principal` for approvals owned by `owner`. */
export function directoryRoles(
  directory: ApproverDirectory | undefined,
  principal: string,
  owner: string,
): readonly string[] {
  const entry = directory?.approvers.get(principal);
  if (entry === undefined || directory === undefined) return [];
  if (entry.owners === undefined && entry.teams === undefined) return entry.roles;
  const inScope =
    entry.owners?.includes(owner) === true ||
    entry.teams?.some((team) => directory.teams.get(team)?.has(owner) === true) === true;
  return inScope ? entry.roles : [];
}

/** Whether the directory gives `principal` any approver role (for some owner). */
export function isDirectoryApprover(
  directory: ApproverDirectory | undefined,
  principal: string,
): boolean {
  return (directory?.approvers.get(principal)?.roles.length ?? 0) > 0;
}

/** Who answers: a principal and its roles; `operator` when no identity is known (protected mode, offline CLI). */
export interface Answerer {
  readonly principal: string;
  readonly roles: readonly string[];
  /**
   * Anyone on the machine, naming the approver. Without a directory it holds every `approve:`
   * role; with one, the principal it names counts only for the roles the directory gives it.
   * It is never the owner.
   */
  readonly operator?: boolean;
}

/** What an answer is about: the approval's id, owner, requester and requirement. */
export interface AnsweredApproval {
  readonly id: string;
  readonly owner: string;
  readonly subject: string;
  readonly requirement: string;
}

/**
 * Why `who` may not give `outcome` on `approval`; undefined when it may. The requester (the
 * grant's subject) never approves its own call. The roles that count are the answerer's own and
 * those the directory gives its principal for the approval's owner.
 */
export function answerProblem(
  policy: Pick<Policy, "ownerApproves">,
  approval: AnsweredApproval,
  who: Answerer,
  outcome: "approve" | "reject",
  directory?: ApproverDirectory,
): string | undefined {
  const role = approveRole(approval.requirement);
  if (outcome === "approve" && who.principal === approval.subject)
    return `${who.principal} made the call held by approval ${approval.id}; the requester never approves its own call`;
  const isOwner = who.principal === approval.owner;
  if (isOwner && (outcome === "reject" || ownerMayApprove(policy, approval.requirement)))
    return undefined;
  if (isOwner && who.operator === true)
    return `the owner does not count as an approver of requirement "${approval.requirement}"; approval ${approval.id} needs holders of the role ${role}`;
  if (who.operator === true && directory === undefined) return undefined;
  if (
    who.roles.includes(role) ||
    directoryRoles(directory, who.principal, approval.owner).includes(role)
  )
    return undefined;
  const owner = ownerMayApprove(policy, approval.requirement) ? " (or the owner)" : "";
  const listed =
    directory === undefined
      ? ""
      : `; the approver directory does not give ${who.principal} that role for ${approval.owner}'s approvals`;
  return `answering approval ${approval.id} needs the role ${role}${owner}; admin alone does not approve${listed}`;
}

/**
 * What is wrong with `directory` under `policy`: a role naming a requirement the policy never
 * holds a call for (a typo would otherwise approve nothing, silently), a scope naming an
 * unknown team.
 */
export function directoryProblems(
  directory: ApproverDirectory,
  requirements: ReadonlySet<string>,
): string[] {
  const problems: string[] = [];
  for (const [principal, entry] of directory.approvers) {
    for (const role of entry.roles) {
      const requirement = role.slice(APPROVE_ROLE_PREFIX.length);
      if (!requirements.has(requirement))
        problems.push(
          `approvers.${principal}: the role ${role} names no requirement of the policy (it knows ${[...requirements].sort().join(", ")})`,
        );
    }
    for (const team of entry.teams ?? [])
      if (!directory.teams.has(team))
        problems.push(`approvers.${principal}: the team "${team}" is not listed under teams`);
  }
  return problems;
}

/** Every requirement `policy` can hold a call for: `owner`, those it counts, and those its rules name. */
export function policyRequirements(policy: Policy): ReadonlySet<string> {
  const names = new Set(["owner", ...policy.requirements.keys()]);
  for (const source of policy.sources.values())
    for (const caveats of source.caveats.values())
      for (const rule of caveats.rules)
        if (rule.then === "require_approval") names.add(rule.requirement);
  return names;
}
