import { EventEmitter } from "node:events";
import { Metadata } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { AuthorityService } from "../../src/gen/charter/v1/authority_pb.js";
import { callerGoneSignal, openCallContext } from "../../src/server/call-context.js";

// The application layer stops a batch for a caller that has gone, and finishes it for one that
// still waits while the server drains: the signal it is given tells the two apart.

/** The surface of a grpc-js server call that a context reads: metadata, deadline, 'cancelled'. */
function grpcCall(deadline: number = Infinity) {
  const events = new EventEmitter();
  return Object.assign(events, { metadata: new Metadata(), getDeadline: () => deadline });
}

const method = AuthorityService.method.batchAuthorize;

describe("callerGoneSignal()", () => {
  it("aborts when the client cancels", () => {
    const call = grpcCall();
    const { ctx } = openCallContext(AuthorityService, method, call, undefined);
    const signal = callerGoneSignal(ctx);
    expect(signal.aborted).toBe(false);
    call.emit("cancelled");
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toMatchObject({ code: "CANCELLED" });
  });

  it("aborts when the deadline passes", async () => {
    const { ctx } = openCallContext(AuthorityService, method, grpcCall(Date.now() + 20), undefined);
    const signal = callerGoneSignal(ctx);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(signal.reason).toMatchObject({ code: "DEADLINE_EXCEEDED" });
  });

  it("stays quiet when the server begins a graceful stop", () => {
    const shutdown = new AbortController();
    const { ctx } = openCallContext(AuthorityService, method, grpcCall(), shutdown.signal);
    const signal = callerGoneSignal(ctx);
    shutdown.abort();
    expect(ctx.signal.aborted).toBe(true);
    expect(signal.aborted).toBe(false);
  });
});
