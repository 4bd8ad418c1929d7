import { callerGone } from "../../src/server/call-context.js";
import type { CallContext } from "../../src/server/call-context.js";

/** What `callerGone(ctx).throwIfAborted()` throws (why the caller has gone), or undefined while it still waits. */
export function goneReason(ctx: CallContext): unknown {
  try {
    callerGone(ctx).throwIfAborted();
    return undefined;
  } catch (reason) {
    return reason;
  }
}
