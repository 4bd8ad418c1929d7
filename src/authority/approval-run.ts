import type { Approval } from "../core/approval.js";
import type { SeenLabel } from "../core/run.js";
import type { AuthorityContext } from "./context.js";

/** What an approver is shown of the run a held call belongs to. */
export interface ApprovalRun {
  readonly runId: string;
  /** Calls allowed in the run so far. */
  readonly calls: number;
  /** The labels the run has seen, each with the call that first brought it in. */
  readonly labels: readonly SeenLabel[];
}

/**
 * The run of the call `approval` holds, as it stands now (its labels and its allowed calls:
 * what a rule over the run judged), or undefined for a call outside any run. The caller has
 * checked that its actor may see the approval.
 */
export async function approvalRun(
  ctx: AuthorityContext,
  approval: Approval,
): Promise<ApprovalRun | undefined> {
  const runId = await ctx.store.approvalRun(approval.id);
  if (runId === undefined) return undefined;
  const row = { grantId: approval.grantId, runId };
  const snapshot = await ctx.store.readRun({
    labelsFrom: [row],
    run: row,
    after: [],
    windows: [],
    now: ctx.now(),
  });
  return { runId, calls: snapshot.calls, labels: snapshot.labels };
}
