import { getEventListeners } from "node:events";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPromiseClient, type PromiseClient } from "../../src/client/index.js";
import { ApprovalEventKind, ApprovalService } from "../../src/gen/charter/v1/approval_pb.js";
import { bindService, type CallContext } from "../../src/server/router.js";

function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function aborted(ctx: CallContext): Promise<void> {
  return new Promise((resolve) => {
    if (ctx.signal.aborted) resolve();
    else ctx.signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

const streamAbortSeen = deferred();
let calls = 0;
let server: Server;
let approvals: PromiseClient<typeof ApprovalService>;

beforeAll(async () => {
  server = new Server();
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
  server.addService(b.definition, b.implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  approvals = createPromiseClient(ApprovalService, { address: `127.0.0.1:${port}` });
});

afterAll(() => {
  approvals.close();
  server.forceShutdown();
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
    await expect(approvals.getApproval({ approvalId: "x" }, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 1 });
    expect(calls).toBe(before);
  });

  it("a completed call leaves no listener on the caller's AbortSignal", async () => {
    const controller = new AbortController();
    for (let i = 0; i < 20; i++) await approvals.getApproval({ approvalId: `c${i}` }, { signal: controller.signal });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});
