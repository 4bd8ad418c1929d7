import {
  authorizeTurn as authorizeWholeTurn,
  type AuthorityContext,
} from "../../authority/index.js";
import type { AuthorityService } from "../../gen/charter/v1/authority_pb.js";
import { DecodeError } from "../../interop/decode-error.js";
import { dialectFromProto } from "../../interop/enums.js";
import { turnAnswerToProto } from "../../interop/turn-codec.js";
import { callerGone, callerOf } from "../call-context.js";
import type { ServiceHandlers } from "../router.js";

/** AuthorizeTurn: every tool call of a model turn in a dialect, with feedback for the model. */
export function authorizeTurn(
  ctx: AuthorityContext,
): ServiceHandlers<typeof AuthorityService>["authorizeTurn"] {
  return async (req, call) => {
    const dialect = dialectFromProto(req.dialect);
    if (dialect === undefined)
      throw new DecodeError("dialect", `unknown value ${String(req.dialect)}`);
    const approvalIds = new Map(Object.entries(req.approvalIds));
    const answer = await authorizeWholeTurn(
      ctx,
      {
        grantToken: req.grantToken,
        dialect,
        turnJson: req.turnJson,
        approvalIds,
        ...(req.runId === "" ? {} : { runId: req.runId }),
      },
      { signal: callerGone(call), ...callerOf(call) },
    );
    return turnAnswerToProto(answer);
  };
}
