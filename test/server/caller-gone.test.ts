import { EventEmitter } from "node:events";
import { Metadata } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { AuthorityService } from "../../src/gen/charter/v1/authority_pb.js";
import { openCallContext } from "../../src/server/call-context.js";
import { goneReason } from "../support/caller-gone.js";

// The application layer stops a batch for a caller that has gone, and finishes it for one that
// still waits while the server drains: the check it is given tells the two apart.

/** The surface of a grpc-js server call that a context reads: metadata, deadline, 'cancelled'. */
function grpcCall(deadline: number = Infinity) {
  const events = new EventEmitter();
  return Object.assign(events, { metadata: new Metadata(), getDeadline: () => deadline });
}

const method = AuthorityService.method.batchAuthorize;
const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

describe("callerGone()", () => {
  it("throws CANCELLED once the client cancels, and nothing before", () => {
    const call = grpcCall();
    const { ctx } = openCallContext(AuthorityService, method, call, undefined);
    expect(goneReason(ctx)).toBeUndefined();
    call.emit("cancelled");
    expect(goneReason(ctx)).toMatchObject({ code: "CANCELLED" });
  });

  it("throws DEADLINE_EXCEEDED once the deadline has passed by the clock, with no timer armed for it", async () => {
    const before = timers();
    const { ctx } = openCallContext(AuthorityService, method, grpcCall(Date.now() + 20), undefined);
    expect(goneReason(ctx)).toBeUndefined();
    expect(timers()).toBe(before);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(goneReason(ctx)).toMatchObject({ code: "DEADLINE_EXCEEDED" });
    // The call's own signal, read afterwards, tells the same.
    expect(ctx.signal.reason).toMatchObject({ code: "DEADLINE_EXCEEDED" });
  });

  it("stays quiet when the server begins a graceful stop", () => {
    const shutdown = new AbortController();
    const { ctx } = openCallContext(AuthorityService, method, grpcCall(), shutdown.signal);
    shutdown.abort();
    expect(ctx.signal.aborted).toBe(true);
    expect(goneReason(ctx)).toBeUndefined();
  });

  it("answers for a context that is a copy (no call state) from its signal and deadline", async () => {
    const call = grpcCall(Date.now() + 20);
    const { ctx } = openCallContext(AuthorityService, method, call, undefined);
    const copy = { ...ctx };
    expect(goneReason(copy)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(goneReason(copy)).toMatchObject({ code: "DEADLINE_EXCEEDED" });
  });
});
