import { revokeGrant as revoke, type AuthorityContext } from "../../authority/index.js";
import type { GrantService } from "../../gen/charter/v1/grant_pb.js";
import { revokeRequestFromProto } from "../../interop/delegate-codec.js";
import type { ServiceHandlers } from "../router.js";

/** RevokeGrant: the grant and every descendant, effective at the next call on this replica. */
export function revokeGrant(
  ctx: AuthorityContext,
): ServiceHandlers<typeof GrantService>["revokeGrant"] {
  return async (req, call) => {
    const { revoked } = await revoke(ctx, revokeRequestFromProto(req), call.caller?.principal);
    return { revokedIds: [...revoked] };
  };
}
