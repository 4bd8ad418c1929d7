import type { GrantService } from "../../gen/charter/v1/grant_pb.js";
import { grantToProto } from "../../interop/grant-codec.js";
import type { ServerContext } from "../context.js";
import type { ServiceHandlers } from "../router.js";
import { RpcError, invalidField } from "../rpc-error.js";

/** GetGrant: a recorded grant and whether it is revoked. */
export function getGrant(ctx: ServerContext): ServiceHandlers<typeof GrantService>["getGrant"] {
  return async (req) => {
    if (req.grantId === "") throw invalidField("grant_id", "is required");
    const stored = await ctx.store.getGrant(req.grantId);
    if (!stored) throw new RpcError("NOT_FOUND", `no grant with id "${req.grantId.slice(0, 128)}"`);
    return { grant: grantToProto(stored.grant), revoked: stored.revokedAt !== undefined };
  };
}
