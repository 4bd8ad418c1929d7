import { delegateGrant as delegate, type AuthorityContext } from "../../authority/index.js";
import type { GrantService } from "../../gen/charter/v1/grant_pb.js";
import { delegateRequestFromProto } from "../../interop/delegate-codec.js";
import { grantToProto } from "../../interop/grant-codec.js";
import type { ServiceHandlers } from "../router.js";

/** DelegateGrant: a child grant that only narrows the parent token's grant, recorded and signed. */
export function delegateGrant(
  ctx: AuthorityContext,
): ServiceHandlers<typeof GrantService>["delegateGrant"] {
  return async (req, call) => {
    const { grant, token } = await delegate(
      ctx,
      delegateRequestFromProto(req),
      call.caller?.principal,
    );
    return { grant: grantToProto(grant), grantToken: token };
  };
}
