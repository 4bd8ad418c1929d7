import { authorize as authorizeCall, type AuthorityContext } from "../../authority/index.js";
import type { AuthorityService } from "../../gen/charter/v1/authority_pb.js";
import { callFromProto } from "../../interop/call-codec.js";
import { verdictToProto } from "../../interop/verdict-codec.js";
import { callerGone, callerOf } from "../call-context.js";
import type { ServiceHandlers } from "../router.js";

/** Authorize: one tool call, one verdict. A bad token is a deny verdict, not an error. */
export function authorize(
  ctx: AuthorityContext,
): ServiceHandlers<typeof AuthorityService>["authorize"] {
  return async (req, call) => {
    const tool = callFromProto(req.call, "call");
    const decided = await authorizeCall(
      ctx,
      {
        grantToken: req.grantToken,
        call: req.approvalId === undefined ? tool : { ...tool, approvalId: req.approvalId },
      },
      { signal: callerGone(call), ...callerOf(call) },
    );
    return { verdict: verdictToProto(decided.verdict, decided) };
  };
}
