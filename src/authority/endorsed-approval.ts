import type { Approval } from "../core/approval.js";
import { answerProblem } from "../core/approvers.js";
import { endorsedDecider, endorsersFor } from "../core/endorsement.js";
import { approversFor } from "../core/policy.js";
import type { JsonObject } from "../core/json.js";
import type { Verdict } from "../core/verdict.js";
import type { ApprovalDraft } from "../store/port.js";
import type { AuthorityContext } from "./context.js";
import type { Loaded } from "./pipeline-steps.js";

/**
 * A held call approved by endorsements, or undefined (the call stays held as usual). Only a call
 * the grant holds for requirement R under its action reads endorsements: the live ones of exactly
 * (grant, action, R), one store read. Those whose bounds accept the call's arguments, one per
 * distinct endorser still allowed to approve it, approve it when they reach R's approver count:
 * one store unit charges each a use and mints the call's approval already approved (or approves
 * the digest's live pending one). A charge refused meanwhile (spent, revoked, expired) leaves the
 * call held.
 */
export async function endorsedApproval(
  ctx: AuthorityContext,
  loaded: Loaded,
  verdict: Verdict,
  draft: ApprovalDraft,
  args: JsonObject,
): Promise<Approval | undefined> {
  if (verdict.decision !== "require_approval" || !loaded.check.ok) return undefined;
  const grant = loaded.check.grant;
  const requirement = verdict.requirement ?? "owner";
  const { policy, catalog, approvers: directory } = loaded.policySet;
  const live = await ctx.store.liveEndorsements(
    grant.id,
    verdict.actionId,
    requirement,
    loaded.now,
  );
  if (live.length === 0) return undefined;
  const held = { id: draft.approval.id, owner: grant.owner, subject: grant.subject, requirement };
  // Each endorser is checked now as if it approved this call one by one: its unrevoked keys'
  // roles and the directory in force (a key revoked or a directory entry dropped since it
  // endorsed no longer counts); without any key (protected mode) the named approver counts as the
  // operator's answer would, by the directory when there is one. Read only on this rare path.
  const keys = (await ctx.store.listApiKeys()).filter((k) => k.revokedAt === undefined);
  const operator = keys.length === 0;
  const mayApprove = (endorser: string) =>
    answerProblem(
      policy,
      held,
      {
        principal: endorser,
        roles: keys.filter((k) => k.principal === endorser).flatMap((k) => k.roles),
        ...(operator ? { operator } : {}),
      },
      "approve",
      directory,
    ) === undefined;
  const chosen = endorsersFor(
    catalog,
    live,
    { grantId: grant.id, actionId: verdict.actionId, requirement, rule: verdict.rule, args },
    approversFor(policy, requirement),
    loaded.now,
    mayApprove,
  );
  if (chosen.length === 0) return undefined;
  const approval = await ctx.store.approveByEndorsements({
    draft,
    endorsements: chosen,
    decidedBy: endorsedDecider(chosen.map((e) => e.id)),
    now: loaded.now,
  });
  return approval?.status === "approved" ? approval : undefined;
}
