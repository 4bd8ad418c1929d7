import { approveRole, ownerMayApprove, type ApproverDirectory } from "./approvers.js";
import { approversFor, type Policy } from "./policy.js";
import type { Counterexample, Finding } from "./policy-analysis.js";

export type { ApproverDirectory } from "./approvers.js";

/** Requirements that need more distinct approvers than can exist: role holders plus the owner where it counts. */
export function unmeetable(
  policy: Policy,
  directory: ApproverDirectory,
  held: ReadonlyMap<string, Counterexample | undefined>,
): Finding[] {
  const out: Finding[] = [];
  for (const [requirement, counterexample] of held) {
    const needed = approversFor(policy, requirement);
    const role = approveRole(requirement);
    // A holder for some owners only still counts: for those owners the requirement can be met.
    const holders = [...directory.approvers.values()].filter((e) => e.roles.includes(role)).length;
    const owner = ownerMayApprove(policy, requirement) ? 1 : 0;
    if (holders + owner >= needed) continue;
    const who =
      holders === 0 ? `nobody holds the role ${role}` : `${holders} principal(s) hold ${role}`;
    out.push({
      kind: "unmeetable-approval",
      severity: "error",
      subject: `requirement ${requirement}`,
      message: `needs ${needed} distinct approver(s), but ${who}${owner === 1 ? " besides the owner" : " and the owner does not count"}: a call held for it can never be approved`,
      ...(counterexample === undefined ? {} : { counterexample }),
    });
  }
  return out;
}
