import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createAppContext } from "../../src/app/context.js";
import {
  createCharterClients,
  createPromiseClient,
  type CharterClients,
} from "../../src/client/index.js";
import { LoadError } from "../../src/core/errors.js";
import { ApprovalEventKind, ApprovalService } from "../../src/gen/charter/v1/approval_pb.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { KeyService } from "../../src/gen/charter/v1/key_pb.js";
import { bindService } from "../../src/server/router.js";
import { RpcError, type RpcCode } from "../../src/server/rpc-error.js";
import { charterServices } from "../../src/server/services.js";
import { DEFAULTS } from "../../src/config/config.js";
import { StoreError, type Store } from "../../src/store/port.js";
import { serve } from "../support/grpc.js";
import { memoryLog } from "../support/memory-log.js";

const FIXTURES = new URL("../../fixtures/", import.meta.url).pathname;
const status = { CANCELLED: 1, NOT_FOUND: 5, ABORTED: 10, INTERNAL: 13, UNAVAILABLE: 14 } as const;

/** The rejection of a call that must fail; fails the test when the call answers. */
async function failureOf(
  call: Promise<unknown>,
): Promise<{ code: number; details: string; message: string }> {
  const outcome = await call.then(
    (value) => ({ answered: value }),
    (err: unknown) => ({ err }),
  );
  if ("answered" in outcome)
    expect.fail(
      `expected the call to fail, it answered ${JSON.stringify(outcome.answered, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))}`,
    );
  return outcome.err as { code: number; details: string; message: string };
}

const search = (grantToken: string, callId: string) => ({
  grantToken,
  call: {
    callId,
    toolName: "web_search",
    argumentsJson: JSON.stringify({ query: "needle-arg-value" }),
  },
});

describe("a store that cannot answer", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "charter-failures-"));
  const memory = memoryLog();
  let store: Store;
  let server: { address: string; stop(): void };
  let clients: CharterClients;

  beforeAll(async () => {
    const ctx = await createAppContext({
      ...DEFAULTS,
      dataDir,
      catalog: join(FIXTURES, "catalog.yaml"),
      policy: join(FIXTURES, "policy.yaml"),
      issuer: "charter-test",
      audience: "charter-test",
      maxBatch: 16,
    });
    store = ctx.store;
    server = await serve(charterServices(ctx, memory.log));
    clients = createCharterClients({ address: server.address });
  });

  afterAll(async () => {
    clients.close();
    server.stop();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("fails closed with UNAVAILABLE once the store is gone, never allows, and logs the cause", async () => {
    const issue = () =>
      clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:w",
        owner: "ana@example.com",
        purpose: "p",
      });
    const warm = await issue();
    const cold = await issue();
    // Before the outage the same calls are allowed; `warm` is now in the verifier's cache, `cold` is not.
    expect(
      (await clients.authority.authorize(search(warm.grantToken, "before"))).verdict?.decision,
    ).toBe(Decision.ALLOW);

    await store.close();

    const unavailable = {
      code: status.UNAVAILABLE,
      details: "the store is unavailable; nothing was decided",
    };
    for (const token of [warm.grantToken, cold.grantToken]) {
      const err = await failureOf(clients.authority.authorize(search(token, "after")));
      expect(err).toMatchObject(unavailable);
      expect(err.message).not.toMatch(/sqlite|closed/);
      await expect(
        clients.authority.batchAuthorize({
          grantToken: token,
          items: [search(token, "b1"), search(token, "b2")],
        }),
      ).rejects.toMatchObject(unavailable);
      await expect(clients.catalog.getCatalog({ grantToken: token })).rejects.toMatchObject(
        unavailable,
      );
    }
    await expect(issue()).rejects.toMatchObject(unavailable);
    await expect(clients.grants.getGrant({ grantId: warm.grant?.id ?? "" })).rejects.toMatchObject(
      unavailable,
    );

    // Each outage is logged as a fault with its cause; never the token or the arguments.
    const failed = memory.lines().filter((l) => l["status"] === "UNAVAILABLE");
    expect(failed.map((l) => l["method"])).toEqual([
      "/charter.v1.AuthorityService/Authorize",
      "/charter.v1.AuthorityService/BatchAuthorize",
      "/charter.v1.CatalogService/GetCatalog",
      "/charter.v1.AuthorityService/Authorize",
      "/charter.v1.AuthorityService/BatchAuthorize",
      "/charter.v1.CatalogService/GetCatalog",
      "/charter.v1.GrantService/IssueGrant",
      "/charter.v1.GrantService/GetGrant",
    ]);
    for (const line of failed) {
      expect(line).toMatchObject({
        level: 50,
        msg: "rpc failed",
        err: {
          type: "StoreError",
          message: expect.stringMatching(/the store is closed/) as unknown,
        },
      });
    }
    const text = memory.text();
    expect(text).not.toContain("needle-arg-value");
    expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/); // no JWS anywhere in the log
  });
});

describe("errors thrown by handlers", () => {
  const memory = memoryLog();
  const running: { stop(): void }[] = [];
  afterEach(() => {
    for (const s of running.splice(0)) s.stop();
  });

  async function keyClient(getJwks: () => Promise<never>) {
    const server = await serve([bindService(KeyService, { getJwks }, memory.log)]);
    running.push(server);
    const client = createPromiseClient(KeyService, { address: server.address });
    running.push({ stop: () => client.close() });
    return client;
  }

  const callLines = (method: string) => memory.lines().filter((l) => l["method"] === method);

  it.each([
    ["an Error thrown from an async handler", () => Promise.reject(new Error("secret-cause-123"))],
    [
      "an Error thrown synchronously",
      () => {
        throw new Error("secret-cause-123");
      },
    ],
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a handler that throws a non-Error, on purpose
    ["a thrown string", () => Promise.reject("secret-cause-123")],
  ])(
    '%s becomes INTERNAL "internal error"; the cause is logged, not sent',
    async (_what, handler) => {
      const before = callLines("/charter.v1.KeyService/GetJwks").length;
      const client = await keyClient(handler);
      const err = await failureOf(client.getJwks({}));
      expect(err).toMatchObject({ code: status.INTERNAL, details: "internal error" });
      expect(JSON.stringify({ ...err, message: err.message })).not.toContain("secret-cause-123");

      const lines = callLines("/charter.v1.KeyService/GetJwks").slice(before);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        level: 50,
        msg: "rpc failed",
        method: "/charter.v1.KeyService/GetJwks",
        status: "INTERNAL",
      });
      expect(JSON.stringify(lines[0]?.["err"])).toContain("secret-cause-123");
    },
  );

  it("a stream whose handler throws ends INTERNAL after the messages already sent, and logs the cause", async () => {
    const server = await serve([
      bindService(
        ApprovalService,
        {
          async *watchApprovals() {
            yield { kind: ApprovalEventKind.CREATED, approval: { id: "apr_1" } };
            throw new Error("secret-cause-456");
          },
        },
        memory.log,
      ),
    ]);
    running.push(server);
    const client = createPromiseClient(ApprovalService, { address: server.address });
    running.push({ stop: () => client.close() });
    const received: string[] = [];
    const err = await failureOf(
      (async () => {
        for await (const event of client.watchApprovals({ owner: "o" }))
          received.push(event.approval?.id ?? "");
      })(),
    );
    expect(received).toEqual(["apr_1"]);
    expect(err).toMatchObject({ code: status.INTERNAL, details: "internal error" });
    expect(err.message).not.toContain("secret-cause-456");
    const lines = callLines("/charter.v1.ApprovalService/WatchApprovals");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ status: "INTERNAL", err: { message: "secret-cause-456" } });
  });

  it.each<[RpcCode, number]>([
    ["INVALID_ARGUMENT", 3],
    ["NOT_FOUND", 5],
    ["PERMISSION_DENIED", 7],
    ["RESOURCE_EXHAUSTED", 8],
    ["FAILED_PRECONDITION", 9],
    ["ABORTED", 10],
    ["UNIMPLEMENTED", 12],
    ["UNAVAILABLE", 14],
    ["UNAUTHENTICATED", 16],
  ])(
    "an RpcError %s keeps its code and message, and is not logged as a fault",
    async (code, grpcCode) => {
      const before = callLines("/charter.v1.KeyService/GetJwks").length;
      const client = await keyClient(() =>
        Promise.reject(new RpcError(code, `field_x: the ${code} message`)),
      );
      await expect(client.getJwks({})).rejects.toMatchObject({
        code: grpcCode,
        details: `field_x: the ${code} message`,
      });
      const lines = callLines("/charter.v1.KeyService/GetJwks").slice(before);
      expect(lines).toEqual([expect.objectContaining({ level: 30, msg: "rpc", status: code })]);
      expect(lines[0]).not.toHaveProperty("err");
    },
  );

  it("an RpcError INTERNAL keeps its message for the caller and logs the error as a fault", async () => {
    const client = await keyClient(() =>
      Promise.reject(new RpcError("INTERNAL", "signing failed")),
    );
    await expect(client.getJwks({})).rejects.toMatchObject({
      code: status.INTERNAL,
      details: "signing failed",
    });
    expect(callLines("/charter.v1.KeyService/GetJwks").at(-1)).toMatchObject({
      level: 50,
      status: "INTERNAL",
      err: { message: "signing failed" },
    });
  });

  it.each([
    [
      "a StoreError NOT_FOUND",
      new StoreError("NOT_FOUND", "no key kid_1"),
      { code: status.NOT_FOUND, details: "no key kid_1" },
    ],
    [
      "a StoreError CONFLICT",
      new StoreError("CONFLICT", "grant exists"),
      { code: status.ABORTED, details: "grant exists" },
    ],
    [
      "a StoreError UNAVAILABLE",
      new StoreError("UNAVAILABLE", "disk on fire at /var/x"),
      { code: status.UNAVAILABLE, details: "the store is unavailable; nothing was decided" },
    ],
    [
      "a StoreError CORRUPT",
      new StoreError("CORRUPT", "page 7 of /var/x is garbage"),
      { code: status.INTERNAL, details: "internal error" },
    ],
    ["a LoadError", new LoadError([{ file: "policy.yaml", message: "bad rule" }]), { code: 9 }],
  ])("%s is translated in the one place errors become statuses", async (_what, error, expected) => {
    const client = await keyClient(() => Promise.reject(error));
    const err = await failureOf(client.getJwks({}));
    expect(err).toMatchObject(expected);
    expect(err.message).not.toContain("/var/x");
  });
});

describe("the call log", () => {
  it("writes one line per call with method, status and duration, and no request contents", async () => {
    const memory = memoryLog();
    const server = await serve([
      bindService(
        ApprovalService,
        {
          getApproval: async (req) => {
            if (req.approvalId === "missing") throw new RpcError("NOT_FOUND", "no such approval");
            return { approval: { id: req.approvalId } };
          },
          async *watchApprovals(req) {
            for (const id of ["a", "b"])
              yield { kind: ApprovalEventKind.CREATED, approval: { id: `${req.owner}-${id}` } };
          },
        },
        memory.log,
      ),
    ]);
    const client = createPromiseClient(ApprovalService, {
      address: server.address,
      metadata: { authorization: "Bearer sk-meta-SECRET" },
    });
    try {
      await client.getApproval({ approvalId: "apr-sk-live-SECRET" });
      await client.getApproval({ approvalId: "apr-sk-live-SECRET" });
      await expect(client.getApproval({ approvalId: "missing" })).rejects.toMatchObject({
        code: status.NOT_FOUND,
      });
      const streamed: string[] = [];
      for await (const e of client.watchApprovals({ owner: "owner-SECRET" }))
        streamed.push(e.approval?.id ?? "");
      expect(streamed).toEqual(["owner-SECRET-a", "owner-SECRET-b"]);
      await expect(client.listApprovals({ owner: "owner-SECRET" })).rejects.toMatchObject({
        code: 12,
      });
    } finally {
      client.close();
      server.stop();
    }

    const lines = memory.lines();
    expect(lines.map((l) => [l["method"], l["status"]])).toEqual([
      ["/charter.v1.ApprovalService/GetApproval", "OK"],
      ["/charter.v1.ApprovalService/GetApproval", "OK"],
      ["/charter.v1.ApprovalService/GetApproval", "NOT_FOUND"],
      ["/charter.v1.ApprovalService/WatchApprovals", "OK"],
      ["/charter.v1.ApprovalService/ListApprovals", "UNIMPLEMENTED"],
    ]);
    for (const line of lines) {
      expect(Object.keys(line).sort()).toEqual([
        "durationMs",
        "hostname",
        "level",
        "method",
        "msg",
        "pid",
        "status",
        "time",
      ]);
      expect(line["durationMs"]).toBeTypeOf("number");
      expect(line["durationMs"] as number).toBeGreaterThanOrEqual(0);
    }
    expect(memory.text()).not.toContain("SECRET");
  });
});
