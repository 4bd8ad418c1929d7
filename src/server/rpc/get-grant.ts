import { getGrant as readGrant, type AuthorityContext } from "../../authority/index.js";
import type { GrantService } from "../../gen/charter/v1/grant_pb.js";
import { grantToProto } from "../../interop/grant-codec.js";
import type { ServiceHandlers } from "../router.js";

/** GetGrant: a recorded grant and whether it is revoked. */
export function getGrant(ctx: AuthorityContext): ServiceHandlers<typeof GrantService>["getGrant"] {
  return async (req) => {
    const stored = await readGrant(ctx, req.grantId);
    return { grant: grantToProto(stored.grant), revoked: stored.revokedAt !== undefined };
  };
}
