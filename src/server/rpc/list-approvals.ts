import { listApprovals as list, type AuthorityContext } from "../../authority/index.js";
import type { ApprovalService } from "../../gen/charter/v1/approval_pb.js";
import { approvalStatusFilterFromProto, approvalToProto } from "../../interop/approval-codec.js";
import type { ServiceHandlers } from "../router.js";

/** ListApprovals: an owner's approvals, newest first, with the safe argument summary. */
export function listApprovals(
  ctx: AuthorityContext,
): ServiceHandlers<typeof ApprovalService>["listApprovals"] {
  return async (req, call) => {
    const status = approvalStatusFilterFromProto(req.status, "status");
    const page = await list(
      ctx,
      {
        owner: req.owner,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        ...(status ? { status } : {}),
      },
      call.caller,
    );
    return { approvals: page.approvals.map(approvalToProto), nextPageToken: page.nextPageToken };
  };
}
