import { authorizeBatch, type AuthorityContext } from "../../authority/index.js";
import type { AuthorityService } from "../../gen/charter/v1/authority_pb.js";
import { callFromProto } from "../../interop/call-codec.js";
import { verdictToProto } from "../../interop/verdict-codec.js";
import { callerGone, callerOf } from "../call-context.js";
import type { ServiceHandlers } from "../router.js";

/** BatchAuthorize: many calls under one grant token; verdicts in request order. */
export function batchAuthorize(
  ctx: AuthorityContext,
): ServiceHandlers<typeof AuthorityService>["batchAuthorize"] {
  return async (req, call) => {
    const calls = req.items.map((item, i) => {
      const tool = callFromProto(item.call, `items[${i}].call`);
      return item.approvalId === undefined ? tool : { ...tool, approvalId: item.approvalId };
    });
    const decided = await authorizeBatch(
      ctx,
      { grantToken: req.grantToken, calls },
      { signal: callerGone(call), ...callerOf(call) },
    );
    return { verdicts: decided.map((d) => verdictToProto(d.verdict, d)) };
  };
}
