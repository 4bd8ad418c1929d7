import { Client, credentials, Metadata } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPromiseClient, type PromiseClient } from "../../src/client/index.js";
import { ApprovalEventKind, ApprovalService } from "../../src/gen/charter/v1/approval_pb.js";
import { loggingInterceptor } from "../../src/server/logging.js";
import { bindService } from "../../src/server/router.js";
import { deferred, serve, within } from "../support/grpc.js";
import { memoryLog } from "../support/memory-log.js";

const memory = memoryLog();
const shutdown = new AbortController();
const streaming = deferred();

let server: { address: string; stop(): void };
let approvals: PromiseClient<typeof ApprovalService>;

beforeAll(async () => {
  const log = memory.log;
  const binding = bindService(
    ApprovalService,
    {
      async getApproval(req) {
        return { approval: { id: req.approvalId } };
      },
      async *watchApprovals() {
        yield { kind: ApprovalEventKind.CREATED, approval: { id: "apr_1" } };
        streaming.resolve();
        await new Promise(() => undefined);
      },
    },
    { interceptors: [loggingInterceptor(log)], shutdown: shutdown.signal, log },
  );
  server = await serve([binding]);
  approvals = createPromiseClient(ApprovalService, { address: server.address });
});

afterAll(() => {
  approvals.close();
  server.stop();
});

describe("the logging interceptor", () => {
  it("logs a malformed request once, as INVALID_ARGUMENT, although it never reaches the interceptors", async () => {
    const client = new Client(server.address, credentials.createInsecure());
    const before = memory.lines().length;
    await new Promise<void>((resolve) =>
      client.makeUnaryRequest(
        "/charter.v1.ApprovalService/GetApproval",
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from([0x0a, 0xff]),
        new Metadata(),
        {},
        () => resolve(),
      ),
    );
    client.close();
    expect(memory.lines().slice(before)).toEqual([
      expect.objectContaining({
        msg: "rpc",
        method: "/charter.v1.ApprovalService/GetApproval",
        status: "INVALID_ARGUMENT",
      }),
    ]);
  });

  it("logs a stream ended by server shutdown as UNAVAILABLE, the status its client got", async () => {
    const ended = (async () => {
      for await (const _e of approvals.watchApprovals({})) void 0;
    })();
    ended.catch(() => undefined);
    await within(streaming.promise, 2_000, "the stream to start");
    shutdown.abort();
    await expect(ended).rejects.toMatchObject({ code: 14 });
    expect(memory.lines().at(-1)).toMatchObject({
      msg: "rpc",
      method: "/charter.v1.ApprovalService/WatchApprovals",
      status: "UNAVAILABLE",
      level: 30,
    });
  });
});
