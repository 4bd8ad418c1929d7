import { revokeEndorsement as revoke, type AuthorityContext } from "../../authority/index.js";
import type { ApprovalService } from "../../gen/charter/v1/approval_pb.js";
import { endorsementToProto } from "../../interop/endorsement-codec.js";
import type { ServiceHandlers } from "../router.js";

/** RevokeEndorsement: the endorsement approves nothing more. */
export function revokeEndorsement(
  ctx: AuthorityContext,
): ServiceHandlers<typeof ApprovalService>["revokeEndorsement"] {
  return async (req, call) => {
    const endorsement = await revoke(
      ctx,
      { endorsementId: req.endorsementId, revokedBy: req.revokedBy },
      call.caller,
    );
    return { endorsement: endorsementToProto(endorsement) };
  };
}
