import { watchApprovals as watch, type AuthorityContext } from "../../authority/index.js";
import type { ApprovalService } from "../../gen/charter/v1/approval_pb.js";
import { approvalEventToProto } from "../../interop/approval-codec.js";
import { invalidField } from "../rpc-error.js";
import type { ServiceHandlers } from "../router.js";

/** WatchApprovals: an owner's approval events as they happen, resumable by sequence; ends when the call's signal aborts (cancel, deadline, shutdown). */
export function watchApprovals(
  ctx: AuthorityContext,
): ServiceHandlers<typeof ApprovalService>["watchApprovals"] {
  return async function* (req, call) {
    const after = req.afterSequence;
    if (after !== undefined && (after < 0n || after > BigInt(Number.MAX_SAFE_INTEGER)))
      throw invalidField("after_sequence", "must be a non-negative integer");
    const events = watch(
      ctx,
      { owner: req.owner, ...(after === undefined ? {} : { afterSequence: Number(after) }) },
      { signal: call.signal, ...(call.caller ? { actor: call.caller } : {}) },
    );
    for await (const event of events) yield approvalEventToProto(event);
  };
}
