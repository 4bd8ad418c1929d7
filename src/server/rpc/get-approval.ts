import { getApproval as get, type AuthorityContext } from "../../authority/index.js";
import type { ApprovalService } from "../../gen/charter/v1/approval_pb.js";
import { approvalToProto } from "../../interop/approval-codec.js";
import type { ServiceHandlers } from "../router.js";

/** GetApproval: one approval by id. */
export function getApproval(
  ctx: AuthorityContext,
): ServiceHandlers<typeof ApprovalService>["getApproval"] {
  return async (req, call) => ({
    approval: approvalToProto(await get(ctx, req.approvalId, call.caller)),
  });
}
