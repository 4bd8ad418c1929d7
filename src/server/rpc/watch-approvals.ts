import { watchApprovals as watch, type AuthorityContext } from "../../authority/index.js";
import type { ApprovalService } from "../../gen/charter/v1/approval_pb.js";
import { approvalEventToProto } from "../../interop/approval-codec.js";
import { RpcError, invalidField } from "../rpc-error.js";
import type { ServiceHandlers } from "../router.js";

/** How many WatchApprovals streams may be open at once in this process: per caller and in all. */
export interface WatchLimits {
  readonly perCaller: number;
  readonly total: number;
}

/** The defaults of `maxWatchStreamsPerCaller` and `maxWatchStreams`. */
export const DEFAULT_WATCH_LIMITS: WatchLimits = { perCaller: 32, total: 1024 };

/**
 * WatchApprovals: an owner's approval events as they happen, resumable by sequence; ends when the
 * call's signal aborts (cancel, deadline, shutdown). A stream past `limits` (open streams of the
 * caller's principal, or of everyone) is refused RESOURCE_EXHAUSTED before it reads anything.
 */
export function watchApprovals(
  ctx: AuthorityContext,
  limits: WatchLimits = DEFAULT_WATCH_LIMITS,
): ServiceHandlers<typeof ApprovalService>["watchApprovals"] {
  const open = new Map<string, number>();
  let total = 0;
  return async function* (req, call) {
    const after = req.afterSequence;
    if (after !== undefined && (after < 0n || after > BigInt(Number.MAX_SAFE_INTEGER)))
      throw invalidField("after_sequence", "must be a non-negative integer");
    const who = call.caller?.principal ?? "";
    const mine = open.get(who) ?? 0;
    if (mine >= limits.perCaller)
      throw new RpcError(
        "RESOURCE_EXHAUSTED",
        `at most ${limits.perCaller} WatchApprovals streams per caller may be open (maxWatchStreamsPerCaller)`,
      );
    if (total >= limits.total)
      throw new RpcError(
        "RESOURCE_EXHAUSTED",
        `at most ${limits.total} WatchApprovals streams may be open on this server (maxWatchStreams)`,
      );
    open.set(who, mine + 1);
    total += 1;
    try {
      const events = watch(
        ctx,
        { owner: req.owner, ...(after === undefined ? {} : { afterSequence: Number(after) }) },
        { signal: call.signal, ...(call.caller ? { actor: call.caller } : {}) },
      );
      for await (const event of events) yield approvalEventToProto(event);
    } finally {
      total -= 1;
      const left = (open.get(who) ?? 1) - 1;
      if (left === 0) open.delete(who);
      else open.set(who, left);
    }
  };
}
