import { issueGrant as issue, type AuthorityContext } from "../../authority/index.js";
import type { GrantService } from "../../gen/charter/v1/grant_pb.js";
import { grantToProto } from "../../interop/grant-codec.js";
import { issueRequestFromProto } from "../../interop/issue-codec.js";
import type { ServiceHandlers } from "../router.js";

/** IssueGrant: compose a task grant from the policy, record it, and sign its token. */
export function issueGrant(
  ctx: AuthorityContext,
): ServiceHandlers<typeof GrantService>["issueGrant"] {
  return async (req, call) => {
    const { grant, token } = await issue(ctx, issueRequestFromProto(req), call.caller?.principal);
    return { grant: grantToProto(grant), grantToken: token };
  };
}
