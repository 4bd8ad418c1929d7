import { decideApproval as decide, type AuthorityContext } from "../../authority/index.js";
import type { ApprovalService } from "../../gen/charter/v1/approval_pb.js";
import { approvalOutcomeFromProto, approvalToProto } from "../../interop/approval-codec.js";
import type { ServiceHandlers } from "../router.js";

/** DecideApproval: one approver's answer; the approval after it. */
export function decideApproval(
  ctx: AuthorityContext,
): ServiceHandlers<typeof ApprovalService>["decideApproval"] {
  return async (req, call) => {
    const outcome = approvalOutcomeFromProto(req.outcome, "outcome");
    const approval = await decide(
      ctx,
      { approvalId: req.approvalId, outcome, decidedBy: req.decidedBy, note: req.note },
      call.caller,
    );
    return { approval: approvalToProto(approval) };
  };
}
