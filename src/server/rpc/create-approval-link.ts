import { createApprovalLink as create, type AuthorityContext } from "../../authority/index.js";
import type { ApprovalService } from "../../gen/charter/v1/approval_pb.js";
import type { ServiceHandlers } from "../router.js";

/** CreateApprovalLink: a single-use inbox link for one approver of one pending approval. */
export function createApprovalLink(
  ctx: AuthorityContext,
): ServiceHandlers<typeof ApprovalService>["createApprovalLink"] {
  return async (req) => {
    const link = await create(ctx, { approvalId: req.approvalId, approver: req.approver });
    return { url: link.url, expiresAt: BigInt(link.expiresAt) };
  };
}
