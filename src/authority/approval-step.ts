import type { Approval } from "../core/approval.js";
import { isJsonObject } from "../core/json.js";
import type { ApprovalRecord, Verdict } from "../core/verdict.js";
import type { HeldStep } from "../store/port.js";
import type { AdmittedCall } from "./admit.js";
import { approvalDraft } from "./approvals.js";
import type { AuthorityContext } from "./context.js";
import { endorsedApproval } from "./endorsed-approval.js";
import type { Loaded } from "./pipeline-steps.js";

// The approval a call holds in the Authorize pipeline (`call-pipeline.ts`): the one it presents,
// the one its require_approval verdict gets or finds approved, or one its endorsements mint.

/** The approval record a call presents, as the core reads it; an unknown id counts as none (a fresh approval is asked for). */
export async function loadApproval(
  ctx: AuthorityContext,
  loaded: Loaded,
  call: AdmittedCall,
): Promise<ApprovalRecord | undefined> {
  const approvalId = call.request.approvalId;
  if (!loaded.check.ok || !call.presentsApproval || approvalId === undefined) return undefined;
  const stored = await ctx.store.getApproval(approvalId);
  return stored && approvalRecord(stored.approval);
}

/** A held call's approval step: the verdict with its approval's id, or the approval found approved. */
export type ApprovalOutcome =
  | { readonly verdict: Verdict; readonly approved?: undefined }
  /** The live approval for this exact call was approved: the call is decided again with it (found by its content). */
  | { readonly verdict: Verdict; readonly approved: ApprovalRecord };

/**
 * Approval: a require_approval verdict gets its pending approval — the live one for this call
 * digest, or a new one (once per digest, also under concurrency) — and carries its id. The
 * approval keeps the arguments' canonical text, the very text the call digest covers. When the
 * live one is already approved, the call is the approved call (same grant, same call digest):
 * its record comes back to be decided with, as if presented (`approved`), and the commit
 * consumes it once.
 */
export async function approvalStep(
  ctx: AuthorityContext,
  loaded: Loaded,
  call: AdmittedCall,
  verdict: Verdict,
): Promise<ApprovalOutcome> {
  const { args, digests } = call;
  if (verdict.decision !== "require_approval" || !loaded.check.ok) return { verdict };
  if (!args.ok || !isJsonObject(args.value) || digests === undefined) return { verdict };
  const action = loaded.policySet.catalog.actions.get(verdict.actionId);
  if (!action) return { verdict };
  const draft = approvalDraft(ctx, loaded.check.grant, action, verdict, loaded.policySet.policy, {
    args: args.value,
    canonical: digests.canonical(),
    now: loaded.now,
  });
  // Calls like one an approver endorsed are approved by the endorsement, up to its bounds and count.
  const endorsed = await endorsedApproval(ctx, loaded, verdict, draft, args.value);
  if (endorsed !== undefined) {
    ctx.approvalFeed.notify();
    return { verdict, approved: approvalRecord(endorsed) };
  }
  const { approval, created } = await ctx.store.createApprovalOnce(draft, loaded.now);
  if (created) ctx.approvalFeed.notify();
  if (approval.status === "approved") return { verdict, approved: approvalRecord(approval) };
  return { verdict: { ...verdict, approvalId: approval.id } };
}

/** What the core reads of an approval. */
export function approvalRecord(a: Approval): ApprovalRecord {
  return { id: a.id, callDigest: a.callDigest, status: a.status, expiresAt: a.expiresAt };
}

/** The approval a held require_approval step waits on, once it is approved (else undefined). */
export async function heldStepApproval(
  ctx: AuthorityContext,
  held: HeldStep,
): Promise<ApprovalRecord | undefined> {
  if (held.decision !== "require_approval") return undefined;
  const { approvalId } = JSON.parse(held.verdictJson) as Verdict;
  const stored = approvalId === undefined ? undefined : await ctx.store.getApproval(approvalId);
  return stored?.approval.status === "approved" ? approvalRecord(stored.approval) : undefined;
}
