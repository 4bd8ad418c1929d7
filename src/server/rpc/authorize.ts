import type { AuthorityService } from "../../gen/charter/v1/authority_pb.js";
import { authorizeCall, validateToolCall } from "../authorize-call.js";
import type { ServerContext } from "../context.js";
import { checkGrantToken } from "../grant-check.js";
import type { ServiceHandlers } from "../router.js";

/** Authorize: one tool call, one verdict. A bad token is a deny verdict, not an error. */
export function authorize(ctx: ServerContext): ServiceHandlers<typeof AuthorityService>["authorize"] {
  return async (req) => {
    const call = validateToolCall(req.call, "call");
    const now = ctx.now();
    const check = await checkGrantToken(ctx, req.grantToken, now);
    return { verdict: await authorizeCall(ctx, check, call, now) };
  };
}
