import { fromBinary } from "@bufbuild/protobuf";
import type { ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPromiseClient, errorDetails, type PromiseClient } from "../../src/client/index.js";
import { KeyService } from "../../src/gen/charter/v1/key_pb.js";
import { StatusSchema } from "../../src/gen/google/rpc/status_pb.js";
import { bindService } from "../../src/server/router.js";
import { RpcError, invalidField } from "../../src/server/rpc-error.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { serve } from "../support/grpc.js";

/** The error a call failed with; fails the test when it answers. */
async function failure(call: Promise<unknown>): Promise<ServiceError> {
  return call.then(
    () => expect.fail("expected the call to fail"),
    (err: unknown) => err as ServiceError,
  );
}

let thrown: unknown;
let server: { address: string; stop(): void };
let keys: PromiseClient<typeof KeyService>;
let charter: TestCharter;

beforeAll(async () => {
  // A test-only service on the real router: its handler throws whatever the test sets.
  server = await serve([
    bindService(KeyService, { getJwks: () => Promise.reject(thrown as Error) }, {}),
  ]);
  keys = createPromiseClient(KeyService, { address: server.address });
  charter = await startTestCharter();
});

afterAll(async () => {
  keys.close();
  server.stop();
  await charter.stop();
});

describe("errorDetails(): machine-readable details in grpc-status-details-bin", () => {
  it("an error with a reason carries google.rpc.ErrorInfo (domain charter), besides today's message", async () => {
    thrown = new RpcError("FAILED_PRECONDITION", 'SOURCE_SUSPENDED: source "legacy" is suspended', {
      reason: "SOURCE_SUSPENDED",
      metadata: { source: "legacy" },
    });
    const err = await failure(keys.getJwks({}));
    expect(err).toMatchObject({
      code: 9,
      details: 'SOURCE_SUSPENDED: source "legacy" is suspended',
    });
    expect(errorDetails(err)).toEqual({
      reason: "SOURCE_SUSPENDED",
      domain: "charter",
      metadata: { source: "legacy" },
      fieldViolations: [],
    });
  });

  it("the trailer is a standard google.rpc.Status with the same code and message", async () => {
    thrown = invalidField("items[1].call.call_id", "is required");
    const err = await failure(keys.getJwks({}));
    const bin = err.metadata.get("grpc-status-details-bin")[0];
    expect(bin).toBeInstanceOf(Buffer);
    const decoded = fromBinary(StatusSchema, bin as Buffer);
    expect(decoded.code).toBe(3);
    expect(decoded.message).toBe("items[1].call.call_id: is required");
    expect(decoded.details.map((d) => d.typeUrl)).toEqual([
      "type.googleapis.com/google.rpc.BadRequest",
    ]);
    expect(errorDetails(err).fieldViolations).toEqual([
      { field: "items[1].call.call_id", description: "is required" },
    ]);
  });

  it("a plain error and an unexpected fault carry no details", async () => {
    thrown = new RpcError("NOT_FOUND", "no such key");
    const plain = await failure(keys.getJwks({}));
    expect(plain.metadata.get("grpc-status-details-bin")).toEqual([]);
    expect(errorDetails(plain)).toEqual({ metadata: {}, fieldViolations: [] });
    thrown = new Error("secret cause");
    const fault = await failure(keys.getJwks({}));
    expect(fault).toMatchObject({ code: 13, details: "internal error" });
    expect(fault.metadata.get("grpc-status-details-bin")).toEqual([]);
  });

  it("a real Charter: IssueGrant without a profile is INVALID_ARGUMENT with a BadRequest naming `profile`", async () => {
    const err = await failure(charter.clients.grants.issueGrant({ subject: "s", owner: "o" }));
    expect(err).toMatchObject({ code: 3, details: "profile: is required" });
    expect(errorDetails(err)).toEqual({
      metadata: {},
      fieldViolations: [{ field: "profile", description: "is required" }],
    });
  });
});
