import type { AuthorityService } from "../../gen/charter/v1/authority_pb.js";
import { authorizeCall, validateToolCall } from "../authorize-call.js";
import type { ServerContext } from "../context.js";
import { checkGrantToken } from "../grant-check.js";
import type { ServiceHandlers } from "../router.js";
import { invalidField } from "../rpc-error.js";

/** BatchAuthorize: many calls under one grant token; verdicts in request order. */
export function batchAuthorize(ctx: ServerContext): ServiceHandlers<typeof AuthorityService>["batchAuthorize"] {
  return async (req) => {
    if (req.items.length === 0) throw invalidField("items", "at least one call is required");
    if (req.items.length > ctx.maxBatch) throw invalidField("items", `at most ${ctx.maxBatch} calls per batch`);
    const calls = req.items.map((item, i) => validateToolCall(item.call, `items[${i}].call`));
    const now = ctx.now();
    const check = await checkGrantToken(ctx, req.grantToken, now);
    const verdicts = [];
    for (const call of calls) verdicts.push(await authorizeCall(ctx, check, call, now));
    return { verdicts };
  };
}
