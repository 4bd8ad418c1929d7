import { listEndorsements as list, type AuthorityContext } from "../../authority/index.js";
import type { ApprovalService } from "../../gen/charter/v1/approval_pb.js";
import { endorsementToProto } from "../../interop/endorsement-codec.js";
import type { ServiceHandlers } from "../router.js";

/** ListEndorsements: endorsements newest first, a page at a time. */
export function listEndorsements(
  ctx: AuthorityContext,
): ServiceHandlers<typeof ApprovalService>["listEndorsements"] {
  return async (req, call) => {
    const page = await list(
      ctx,
      {
        owner: req.owner,
        activeOnly: req.activeOnly,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
      },
      call.caller,
    );
    return {
      endorsements: page.endorsements.map(endorsementToProto),
      nextPageToken: page.nextPageToken,
    };
  };
}
