import { EventEmitter } from "node:events";
import { Metadata } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { AuthorityService } from "../../src/gen/charter/v1/authority_pb.js";
import {
  callStatus,
  clientGone,
  openCallContext,
  withCaller,
} from "../../src/server/call-context.js";
import { goneReason } from "../support/caller-gone.js";

// A context makes its signals only when they are first read: what happened to the call before
// that must show on them all the same.

function grpcCall(deadline: number = Infinity) {
  return Object.assign(new EventEmitter(), {
    metadata: new Metadata(),
    getDeadline: () => deadline,
  });
}

const method = AuthorityService.method.authorize;
const caller = { principal: "gw", roles: ["gateway"] };

describe("a call context's signals, made when first read", () => {
  it("show a cancellation that happened before they were read", () => {
    const call = grpcCall();
    const { ctx } = openCallContext(AuthorityService, method, call, undefined);
    call.emit("cancelled");
    expect(clientGone(ctx)).toBe(true);
    expect(callStatus(ctx).code).toBe(1);
    expect(ctx.signal.reason).toMatchObject({ code: "CANCELLED" });
    expect(goneReason(ctx)).toMatchObject({ code: "CANCELLED" });
  });

  it("show a shutdown that began before they were read, on the call's signal only", () => {
    const shutdown = new AbortController();
    const { ctx } = openCallContext(AuthorityService, method, grpcCall(), shutdown.signal);
    shutdown.abort();
    expect(ctx.signal.reason).toMatchObject({ code: "UNAVAILABLE" });
    expect(goneReason(ctx)).toBeUndefined();
    expect(clientGone(ctx)).toBe(false);
  });

  it("abort when the deadline passes once read, though nothing read them when the call opened", async () => {
    const { ctx } = openCallContext(AuthorityService, method, grpcCall(Date.now() + 30), undefined);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const signal = ctx.signal;
    expect(signal.aborted).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(signal.reason).toMatchObject({ code: "DEADLINE_EXCEEDED" });
  });

  it("tell a deadline that passed unobserved by the clock", async () => {
    const { ctx } = openCallContext(AuthorityService, method, grpcCall(Date.now() + 10), undefined);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(callStatus(ctx).code).toBe(4);
    expect(ctx.signal.aborted).toBe(true);
  });

  it("are the same for the context authentication passes on (withCaller), whichever is read first", () => {
    const call = grpcCall();
    const { ctx } = openCallContext(AuthorityService, method, call, undefined);
    const authenticated = withCaller(ctx, caller);
    expect(authenticated.caller).toEqual(caller);
    expect(authenticated.path).toBe("/charter.v1.AuthorityService/Authorize");
    expect(authenticated.signal).toBe(ctx.signal);
    expect(goneReason(authenticated)).toBeUndefined();
    call.emit("cancelled");
    expect(ctx.signal.aborted).toBe(true);
    expect(goneReason(authenticated)).toMatchObject({ code: "CANCELLED" });
  });

  it("stay quiet once the call has ended (grpc-js reports every closed stream as cancelled)", () => {
    const call = grpcCall();
    const { ctx, close } = openCallContext(AuthorityService, method, call, undefined);
    close();
    call.emit("cancelled");
    expect(ctx.signal.aborted).toBe(false);
    expect(callStatus(ctx).code).toBe(0);
  });

  it("survive a spread copy of the context with their values", () => {
    const call = grpcCall();
    const { ctx } = openCallContext(AuthorityService, method, call, undefined);
    const copy = { ...ctx, caller };
    call.emit("cancelled");
    expect(copy.signal.aborted).toBe(true);
    expect(copy.clientCertificate).toBeUndefined();
  });
});
