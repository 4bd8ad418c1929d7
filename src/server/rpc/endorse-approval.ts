import { endorseApproval as endorse, type AuthorityContext } from "../../authority/index.js";
import type { ApprovalService } from "../../gen/charter/v1/approval_pb.js";
import { endorsementToProto } from "../../interop/endorsement-codec.js";
import type { ServiceHandlers } from "../router.js";

/** EndorseApproval: an approver's scoped endorsement of calls like one it approved. */
export function endorseApproval(
  ctx: AuthorityContext,
): ServiceHandlers<typeof ApprovalService>["endorseApproval"] {
  return async (req, call) => {
    const endorsement = await endorse(
      ctx,
      {
        approvalId: req.approvalId,
        boundsJson: req.boundsJson,
        maxCalls: req.maxCalls,
        // Beyond the safe range the request is out of bounds anyway.
        ttlSeconds: Number(req.ttlSeconds),
        endorsedBy: req.endorsedBy,
      },
      call.caller,
    );
    return { endorsement: endorsementToProto(endorsement) };
  };
}
