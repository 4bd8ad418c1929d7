import { Client, credentials, Metadata } from "@grpc/grpc-js";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPromiseClient, type PromiseClient } from "../../src/client/index.js";
import { ApprovalEventKind, ApprovalService } from "../../src/gen/charter/v1/approval_pb.js";
import { loggingInterceptor } from "../../src/server/logging.js";
import { bindService } from "../../src/server/router.js";
import { deferred, serve, within } from "../support/grpc.js";

const chunks: string[] = [];
const lines = () =>
  chunks
    .join("")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const shutdown = new AbortController();
const streaming = deferred();

let server: { address: string; stop(): void };
let approvals: PromiseClient<typeof ApprovalService>;

beforeAll(async () => {
  const log = pino(
    { level: "info" },
    new Writable({
      write: (c: Buffer, _e, done) => {
        chunks.push(c.toString());
        done();
      },
    }),
  );
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
    const before = lines().length;
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
    expect(lines().slice(before)).toEqual([expect.objectContaining({ msg: "rpc", method: "/charter.v1.ApprovalService/GetApproval", status: "INVALID_ARGUMENT" })]);
  });

  it("logs a stream ended by server shutdown as UNAVAILABLE, the status its client got", async () => {
    const ended = (async () => {
      for await (const _e of approvals.watchApprovals({})) void 0;
    })();
    ended.catch(() => undefined);
    await within(streaming.promise, 2_000, "the stream to start");
    shutdown.abort();
    await expect(ended).rejects.toMatchObject({ code: 14 });
    expect(lines().at(-1)).toMatchObject({ msg: "rpc", method: "/charter.v1.ApprovalService/WatchApprovals", status: "UNAVAILABLE", level: 30 });
  });
});
