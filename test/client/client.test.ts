import type { Metadata } from "@grpc/grpc-js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPromiseClient, type PromiseClient } from "../../src/client/index.js";
import { ApprovalEventKind, ApprovalService } from "../../src/gen/charter/v1/approval_pb.js";
import { KeyService } from "../../src/gen/charter/v1/key_pb.js";
import { bindService } from "../../src/server/router.js";
import { aborted, deferred, serve, within, type Deferred } from "../support/grpc.js";

const status = { CANCELLED: 1, DEADLINE_EXCEEDED: 4 } as const;

// What the test handlers observed, per call; keyed by the request's approval id or owner.
const seenMetadata = new Map<string, Metadata>();
const started = new Map<string, Deferred>();
const abortSeen = new Map<string, Deferred>();
/** The event `key` in `map`, created by whichever side (handler or test) gets there first. */
const event = (map: Map<string, Deferred>, key: string): Deferred => {
  const d = map.get(key) ?? deferred();
  map.set(key, d);
  return d;
};

let server: { address: string; stop(): void };
let address: string;
let approvals: PromiseClient<typeof ApprovalService>;

beforeAll(async () => {
  const log = pino({ level: "silent" });
  const keys = bindService(KeyService, { getJwks: async () => ({ jwksJson: '{"keys":[]}' }) }, log);
  const approvalBinding = bindService(
    ApprovalService,
    {
      async getApproval(req, ctx) {
        const id = req.approvalId;
        seenMetadata.set(id, ctx.metadata);
        if (id.startsWith("wait")) {
          event(started, id).resolve();
          await aborted(ctx);
          event(abortSeen, id).resolve();
          throw new Error("the caller went away");
        }
        return { approval: { id } };
      },
      async *watchApprovals(req, ctx) {
        if (req.owner === "three") {
          for (const [i, kind] of [
            ApprovalEventKind.CREATED,
            ApprovalEventKind.DECIDED,
            ApprovalEventKind.CONSUMED,
          ].entries()) {
            yield { kind, approval: { id: `apr_${i + 1}` } };
          }
          return;
        }
        // Endless: one event now, then the next only when the caller cancels (which it never sees).
        yield { kind: ApprovalEventKind.CREATED, approval: { id: "apr_first" } };
        await aborted(ctx);
        event(abortSeen, req.owner).resolve();
        yield { kind: ApprovalEventKind.EXPIRED, approval: { id: "apr_after_cancel" } };
      },
    },
    log,
  );
  server = await serve([keys, approvalBinding]);
  address = server.address;
  approvals = createPromiseClient(ApprovalService, {
    address,
    metadata: { authorization: "Bearer config-token", "x-origin": "config" },
  });
});

afterAll(() => {
  approvals.close();
  server.stop();
});

describe("createPromiseClient(): unary calls", () => {
  it("answers the decoded response message", async () => {
    const { approval } = await approvals.getApproval({ approvalId: "apr_plain" });
    expect(approval?.id).toBe("apr_plain");
    expect(approval?.$typeName).toBe("charter.v1.Approval");
  });

  it("sends the client's metadata with every call, and per-call metadata on top", async () => {
    await approvals.getApproval({ approvalId: "md-config" });
    await approvals.getApproval(
      { approvalId: "md-call" },
      { metadata: { "x-request-id": "req-42", "x-origin": "call" } },
    );
    expect(seenMetadata.get("md-config")?.getMap()).toMatchObject({
      authorization: "Bearer config-token",
      "x-origin": "config",
    });
    expect(seenMetadata.get("md-config")?.get("x-request-id")).toEqual([]);
    const perCall = seenMetadata.get("md-call");
    expect(perCall?.get("authorization")).toEqual(["Bearer config-token"]);
    expect(perCall?.get("x-request-id")).toEqual(["req-42"]);
    expect(perCall?.get("x-origin")).toEqual(["call"]);
  });

  it("fails DEADLINE_EXCEEDED past timeoutMs, and the handler's signal aborts", async () => {
    const call = approvals.getApproval({ approvalId: "wait-deadline" }, { timeoutMs: 100 });
    await expect(call).rejects.toMatchObject({ code: status.DEADLINE_EXCEEDED });
    await within(
      event(abortSeen, "wait-deadline").promise,
      2_000,
      "the handler to see its signal abort",
    );
  });

  it("cancels a call when the AbortSignal in its options aborts: CANCELLED, and the handler's signal aborts", async () => {
    const controller = new AbortController();
    const call = approvals.getApproval(
      { approvalId: "wait-abort" },
      { signal: controller.signal, timeoutMs: 10_000 },
    );
    await within(event(started, "wait-abort").promise, 2_000, "the handler to start");
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: status.CANCELLED });
    await within(
      event(abortSeen, "wait-abort").promise,
      2_000,
      "the handler to see its signal abort",
    );
  });
});

describe("createPromiseClient(): server streaming", () => {
  it("is consumed as an async iterable, in order", async () => {
    const events: [string, ApprovalEventKind][] = [];
    for await (const e of approvals.watchApprovals({ owner: "three" }))
      events.push([e.approval?.id ?? "", e.kind]);
    expect(events).toEqual([
      ["apr_1", ApprovalEventKind.CREATED],
      ["apr_2", ApprovalEventKind.DECIDED],
      ["apr_3", ApprovalEventKind.CONSUMED],
    ]);
  });

  it("is cancelled by an AbortSignal: the loop ends CANCELLED and the handler's signal aborts", async () => {
    const controller = new AbortController();
    const received: string[] = [];
    const consume = (async () => {
      for await (const e of approvals.watchApprovals(
        { owner: "abort-stream" },
        { signal: controller.signal },
      )) {
        received.push(e.approval?.id ?? "");
        controller.abort();
      }
    })();
    await expect(consume).rejects.toMatchObject({ code: status.CANCELLED });
    expect(received).toEqual(["apr_first"]);
    await within(
      event(abortSeen, "abort-stream").promise,
      2_000,
      "the handler to see its signal abort",
    );
  });
});

describe("createPromiseClient(): close()", () => {
  it("closes the channel: a call after close fails", async () => {
    const keys = createPromiseClient(KeyService, { address });
    expect((await keys.getJwks({})).jwksJson).toBe('{"keys":[]}');
    keys.close();
    await expect(keys.getJwks({})).rejects.toThrow(/shut ?down|closed/i);
  });
});
