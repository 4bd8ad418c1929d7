// A handler that reads its call's signal only after the client has gone still sees it aborted
// (the signal is made when first read), on a real server with a real client.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPromiseClient, type PromiseClient } from "../../src/client/index.js";
import { ApprovalService } from "../../src/gen/charter/v1/approval_pb.js";
import { withCaller } from "../../src/server/call-context.js";
import { bindService } from "../../src/server/router.js";
import { deferred, serve, within, type Deferred } from "../support/grpc.js";
import { goneReason } from "../support/caller-gone.js";
import { memoryLog } from "../support/memory-log.js";

const memory = memoryLog();
let entered: Deferred;
let cancelled: Deferred;
let seen: Promise<{ signal: unknown; gone: unknown; authenticated: unknown }>;
let report: (v: { signal: unknown; gone: unknown; authenticated: unknown }) => void;

let server: { address: string; stop(): void };
let approvals: PromiseClient<typeof ApprovalService>;

beforeAll(async () => {
  const b = bindService(
    ApprovalService,
    {
      async getApproval(_req, ctx) {
        entered.resolve();
        await cancelled.promise;
        // Let the server see the client's RST_STREAM before anything is read.
        await new Promise((resolve) => setTimeout(resolve, 100));
        const authenticated = withCaller(ctx, { principal: "p", roles: [] });
        report({
          signal: ctx.signal.reason,
          gone: goneReason(ctx),
          authenticated: authenticated.signal.aborted,
        });
        throw ctx.signal.reason;
      },
    },
    memory.log,
  );
  server = await serve([b]);
  approvals = createPromiseClient(ApprovalService, { address: server.address });
});

afterAll(() => {
  approvals.close();
  server.stop();
});

describe("a call's signal read only after the client cancelled", () => {
  it("is aborted CANCELLED, and so is the caller-gone signal made after it", async () => {
    entered = deferred();
    cancelled = deferred();
    seen = new Promise((resolve) => (report = resolve));
    const controller = new AbortController();
    const call = approvals.getApproval({ approvalId: "a" }, { signal: controller.signal });
    await within(entered.promise, 5000, "the handler");
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 1 });
    cancelled.resolve();
    const { signal, gone, authenticated } = await within(seen, 5000, "the handler's report");
    expect(signal).toMatchObject({ code: "CANCELLED" });
    expect(gone).toMatchObject({ code: "CANCELLED" });
    expect(authenticated).toBe(true);
  });
});
