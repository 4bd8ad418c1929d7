import { getEventListeners } from "node:events";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPromiseClient, type PromiseClient } from "../../src/client/index.js";
import { ApprovalEventKind, ApprovalService } from "../../src/gen/charter/v1/approval_pb.js";
import { bindService } from "../../src/server/router.js";
import { aborted, deferred, serve, within } from "../support/grpc.js";

const streamAbortSeen = deferred();
let calls = 0;
let server: { address: string; stop(): void };
let approvals: PromiseClient<typeof ApprovalService>;

beforeAll(async () => {
  const b = bindService(
    ApprovalService,
    {
      async getApproval(req) {
        calls += 1;
        return { approval: { id: req.approvalId } };
      },
      async *watchApprovals(_req, ctx) {
        yield { kind: ApprovalEventKind.CREATED, approval: { id: "apr_first" } };
        yield { kind: ApprovalEventKind.CREATED, approval: { id: "apr_second" } };
        await aborted(ctx);
        streamAbortSeen.resolve();
      },
    },
    pino({ level: "silent" }),
  );
  server = await serve([b]);
  approvals = createPromiseClient(ApprovalService, { address: server.address });
});

afterAll(() => {
  approvals.close();
  server.stop();
});

describe("createPromiseClient(): cancellation", () => {
  it("breaking out of a server stream's loop early cancels the call on the server", async () => {
    const received: string[] = [];
    for await (const e of approvals.watchApprovals({ owner: "o" })) {
      received.push(e.approval?.id ?? "");
      break;
    }
    expect(received).toEqual(["apr_first"]);
    await within(streamAbortSeen.promise, 2_000, "the server handler to see its signal abort");
  });

  it("an AbortSignal that has already aborted cancels the call (it is never sent)", async () => {
    const before = calls;
    await expect(
      approvals.getApproval({ approvalId: "x" }, { signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({ code: 1 });
    expect(calls).toBe(before);
  });

  it("a completed call leaves no listener on the caller's AbortSignal", async () => {
    const controller = new AbortController();
    for (let i = 0; i < 20; i++)
      await approvals.getApproval({ approvalId: `c${i}` }, { signal: controller.signal });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});
