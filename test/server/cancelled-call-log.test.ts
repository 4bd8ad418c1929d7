// A call the client cancelled (or whose deadline passed) is logged with the status the client got
// (CANCELLED / DEADLINE_EXCEEDED), not as a server fault (INTERNAL with an error) or as OK.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPromiseClient, type PromiseClient } from "../../src/client/index.js";
import { ApprovalEventKind, ApprovalService } from "../../src/gen/charter/v1/approval_pb.js";
import { bindService } from "../../src/server/router.js";
import { aborted, serve } from "../support/grpc.js";
import { memoryLog } from "../support/memory-log.js";

const memory = memoryLog();
// Keyed by the call's approval id (owner, for the stream): a handler that ends late (on a loaded
// machine) can only ever resolve its own test's wait.
const finished = new Map<string, () => void>();
const started = new Map<string, () => void>();
const handlerStarted = (key: string) => new Promise<void>((resolve) => started.set(key, resolve));
const handlerDone = (key: string) => new Promise<void>((resolve) => finished.set(key, resolve));

/** The first line logged for `method` from now on (whether or not its handler ran). */
async function nextLine(method: string, since: number): Promise<Record<string, unknown>> {
  for (;;) {
    const line = memory
      .lines()
      .slice(since)
      .find((l) => l["method"] === method);
    if (line !== undefined) return line;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let server: { address: string; stop(): void };
let approvals: PromiseClient<typeof ApprovalService>;

beforeAll(async () => {
  const log = memory.log;
  const b = bindService(
    ApprovalService,
    {
      async getApproval(req, ctx) {
        started.get(req.approvalId)?.();
        await aborted(ctx);
        setImmediate(() => finished.get(req.approvalId)?.());
        throw ctx.signal.reason ?? new Error("aborted");
      },
      async *watchApprovals(req, ctx) {
        yield { kind: ApprovalEventKind.CREATED, approval: { id: "apr_first" } };
        await aborted(ctx);
        setImmediate(() => finished.get(req.owner)?.());
      },
    },
    log,
  );
  server = await serve([b]);
  approvals = createPromiseClient(ApprovalService, { address: server.address });
});

afterAll(() => {
  approvals.close();
  server.stop();
});

describe("the call log of calls the client gave up on", () => {
  it("logs a unary call past its deadline as DEADLINE_EXCEEDED, not as an INTERNAL fault", async () => {
    // The line is awaited, not the handler: on a loaded machine the deadline may pass before it
    // runs. The deadline leaves time to connect: one that passes before the call is even sent is
    // the client's own, and the server logs nothing.
    const since = memory.lines().length;
    await expect(
      approvals.getApproval({ approvalId: "a" }, { timeoutMs: 1000 }),
    ).rejects.toMatchObject({ code: 4 });
    const line = await nextLine("/charter.v1.ApprovalService/GetApproval", since);
    expect(line).toMatchObject({ status: "DEADLINE_EXCEEDED", level: 30 });
  });

  it("logs a cancelled unary call as CANCELLED, not as an INTERNAL fault", async () => {
    const controller = new AbortController();
    const done = handlerDone("b");
    const running = handlerStarted("b");
    const call = approvals.getApproval({ approvalId: "b" }, { signal: controller.signal });
    await running;
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 1 });
    await done;
    expect(memory.lines().at(-1)).toMatchObject({
      method: "/charter.v1.ApprovalService/GetApproval",
      status: "CANCELLED",
      level: 30,
    });
  });

  it("logs a server stream the client cancelled as CANCELLED, not OK", async () => {
    const controller = new AbortController();
    const done = handlerDone("o");
    await expect(
      (async () => {
        for await (const _e of approvals.watchApprovals(
          { owner: "o" },
          { signal: controller.signal },
        ))
          controller.abort();
      })(),
    ).rejects.toMatchObject({ code: 1 });
    await done;
    expect(memory.lines().at(-1)).toMatchObject({
      method: "/charter.v1.ApprovalService/WatchApprovals",
      status: "CANCELLED",
    });
  });
});
