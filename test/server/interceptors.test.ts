import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPromiseClient, type PromiseClient } from "../../src/client/index.js";
import { ApprovalEventKind, ApprovalService } from "../../src/gen/charter/v1/approval_pb.js";
import { bindService, type CallContext, type Interceptor } from "../../src/server/router.js";
import { aborted, deferred, serve, within } from "../support/grpc.js";

const status = { DEADLINE_EXCEEDED: 4, UNAUTHENTICATED: 16, UNAVAILABLE: 14 } as const;

/** What each interceptor and the handlers saw, in order. */
const trace: string[] = [];
const seen = new Map<string, CallContext>();
const shutdown = new AbortController();
const unaryAbort = deferred();
const unaryRunning = deferred();
const streamRunning = deferred();

const tag =
  (name: string): Interceptor =>
  (next) =>
  async (req, ctx) => {
    trace.push(`${name} in ${ctx.method.name}`);
    const out = await next(req, ctx);
    trace.push(`${name} out ${ctx.method.name} ${out.stream ? "stream" : "unary"}`);
    return out;
  };

/** Sets the caller from an `x-principal` header, and refuses calls without one. */
const authenticate: Interceptor = (next) => async (req, ctx) => {
  const principal = ctx.metadata.get("x-principal")[0];
  if (typeof principal !== "string")
    throw Object.assign(new Error("no principal"), { code: "UNAUTHENTICATED" });
  return next(req, { ...ctx, caller: { principal, roles: ["reader"] } });
};

let server: { address: string; stop(): void };
let client: PromiseClient<typeof ApprovalService>;

beforeAll(async () => {
  const binding = bindService(
    ApprovalService,
    {
      async getApproval(req, ctx) {
        seen.set(req.approvalId, ctx);
        trace.push(`handler ${req.approvalId}`);
        if (req.approvalId === "wait-shutdown") {
          unaryRunning.resolve();
          await aborted(ctx);
          unaryAbort.resolve();
          return { approval: { id: "answered after the abort" } };
        }
        if (req.approvalId === "wait-deadline") {
          await aborted(ctx);
          seen.set("deadline-reason", ctx);
          unaryAbort.resolve();
        }
        return { approval: { id: req.approvalId } };
      },
      async *watchApprovals(req, ctx) {
        seen.set(`watch ${req.owner}`, ctx);
        yield { kind: ApprovalEventKind.CREATED, approval: { id: "apr_1" } };
        if (req.owner === "forever") {
          streamRunning.resolve();
          // Ignores its signal on purpose: the router must end the call anyway.
          await new Promise(() => undefined);
        }
      },
    },
    { interceptors: [tag("outer"), tag("inner"), authenticate], shutdown: shutdown.signal },
  );
  server = await serve([binding]);
  client = createPromiseClient(ApprovalService, {
    address: server.address,
    metadata: { "x-principal": "user:ana" },
  });
});

afterAll(() => {
  client.close();
  server.stop();
});

describe("the interceptor seam", () => {
  it("wraps a unary call as an onion, the first interceptor outermost, after decoding", async () => {
    trace.length = 0;
    await client.getApproval({ approvalId: "plain" });
    expect(trace).toEqual([
      "outer in GetApproval",
      "inner in GetApproval",
      "handler plain",
      "inner out GetApproval unary",
      "outer out GetApproval unary",
    ]);
  });

  it("wraps a server stream the same way", async () => {
    trace.length = 0;
    const ids: string[] = [];
    for await (const e of client.watchApprovals({ owner: "o" })) ids.push(e.approval?.id ?? "");
    expect(ids).toEqual(["apr_1"]);
    expect(trace).toEqual([
      "outer in WatchApprovals",
      "inner in WatchApprovals",
      "inner out WatchApprovals stream",
      "outer out WatchApprovals stream",
    ]);
  });

  it("gives the handler the descriptors, path, metadata, deadline, and the caller an interceptor set", async () => {
    await client.getApproval(
      { approvalId: "ctx" },
      { timeoutMs: 5_000, metadata: { "x-request-id": "r-1" } },
    );
    const ctx = seen.get("ctx");
    expect(ctx?.service.typeName).toBe("charter.v1.ApprovalService");
    expect(ctx?.method.name).toBe("GetApproval");
    expect(ctx?.method.input.typeName).toBe("charter.v1.GetApprovalRequest");
    expect(ctx?.path).toBe("/charter.v1.ApprovalService/GetApproval");
    expect(ctx?.metadata.get("x-request-id")).toEqual(["r-1"]);
    expect(ctx?.caller).toEqual({ principal: "user:ana", roles: ["reader"] });
    expect(ctx?.deadline?.getTime()).toBeGreaterThan(Date.now());
    expect(ctx?.signal.aborted).toBe(false);
    for await (const _e of client.watchApprovals({ owner: "ctx" })) break;
    expect(seen.get("watch ctx")?.caller?.principal).toBe("user:ana");
  });

  it("lets an interceptor end the call before the handler runs", async () => {
    const anonymous = createPromiseClient(ApprovalService, { address: server.address });
    trace.length = 0;
    await expect(anonymous.getApproval({ approvalId: "anon" })).rejects.toMatchObject({ code: 13 });
    anonymous.close();
    expect(trace).not.toContain("handler anon");
  });

  it("aborts the call's signal when the deadline passes, with DEADLINE_EXCEEDED as the reason", async () => {
    await expect(
      client.getApproval({ approvalId: "wait-deadline" }, { timeoutMs: 100 }),
    ).rejects.toMatchObject({ code: status.DEADLINE_EXCEEDED });
    await within(unaryAbort.promise, 2_000, "the handler to see its signal abort");
    expect(seen.get("deadline-reason")?.signal.reason).toMatchObject({ code: "DEADLINE_EXCEEDED" });
  });
});

describe("server shutdown through the call's signal", () => {
  it("aborts every open call's signal; a unary call still answers, a stream ends UNAVAILABLE at once", async () => {
    const stream = (async () => {
      for await (const _e of client.watchApprovals({ owner: "forever" })) void 0;
    })();
    stream.catch(() => undefined);
    const unary = client.getApproval({ approvalId: "wait-shutdown" });
    await within(
      Promise.all([streamRunning.promise, unaryRunning.promise]),
      2_000,
      "both calls to start",
    );

    const before = Date.now();
    shutdown.abort();
    await within(unaryAbort.promise, 1_000, "the unary handler to see ctx.signal abort");
    expect(seen.get("wait-shutdown")?.signal.reason).toMatchObject({
      code: "UNAVAILABLE",
      message: "server shutting down",
    });
    await expect(unary).resolves.toMatchObject({ approval: { id: "answered after the abort" } });
    await expect(within(stream, 1_000, "the stream to end")).rejects.toMatchObject({
      code: status.UNAVAILABLE,
      details: "server shutting down",
    });
    expect(Date.now() - before).toBeLessThan(500);
  });
});
