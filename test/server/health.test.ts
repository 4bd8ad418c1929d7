import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPromiseClient, type PromiseClient } from "../../src/client/index.js";
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../src/gen/grpc/health/v1/health_pb.js";
import { createHealth, type HealthService } from "../../src/server/health.js";
import { serve, within } from "../support/grpc.js";

const code = { NOT_FOUND: 5, UNAVAILABLE: 14 } as const;

/** Collects a Watch stream's statuses; `ended` settles with how the stream ended. */
function watch(client: PromiseClient<typeof Health>, service: string) {
  const statuses: ServingStatus[] = [];
  let notify: (() => void) | undefined;
  const ended = (async () => {
    for await (const r of client.watch({ service })) {
      statuses.push(r.status);
      notify?.();
    }
  })();
  ended.catch(() => undefined);
  /** Resolves once `n` statuses have arrived. */
  const received = (n: number) =>
    within(
      new Promise<void>((resolve) => {
        notify = () => statuses.length >= n && resolve();
        notify();
      }),
      2_000,
      `${n} health statuses`,
    );
  return { statuses, ended, received };
}

let shutdown: AbortController;
let health: HealthService;
let server: { address: string; stop(): void };
let client: PromiseClient<typeof Health>;

beforeAll(async () => {
  shutdown = new AbortController();
  health = createHealth(["", "charter.v1.KeyService"], { shutdown: shutdown.signal });
  server = await serve([health.binding]);
  client = createPromiseClient(Health, { address: server.address });
});

afterAll(() => {
  client.close();
  server.stop();
});

describe("grpc.health.v1.Health through the router", () => {
  it("Check answers the status of the server and of a named service", async () => {
    await expect(client.check({ service: "" })).resolves.toMatchObject({
      status: ServingStatus.SERVING,
    });
    await expect(client.check({ service: "charter.v1.KeyService" })).resolves.toMatchObject({
      status: ServingStatus.SERVING,
    });
  });

  it("Check of an unknown service is NOT_FOUND", async () => {
    await expect(client.check({ service: "no.such.Service" })).rejects.toMatchObject({
      code: code.NOT_FOUND,
    });
  });

  it("Watch streams the current status, then each change", async () => {
    const w = watch(client, "charter.v1.KeyService");
    await w.received(1);
    health.setStatus("charter.v1.KeyService", "NOT_SERVING");
    await w.received(2);
    health.setStatus("charter.v1.KeyService", "SERVING");
    await w.received(3);
    expect(w.statuses).toEqual([
      ServingStatus.SERVING,
      ServingStatus.NOT_SERVING,
      ServingStatus.SERVING,
    ]);
  });

  it("Watch of an unknown service streams SERVICE_UNKNOWN, then its status once it is known", async () => {
    const w = watch(client, "later.Service");
    await w.received(1);
    health.setStatus("later.Service", "SERVING");
    await w.received(2);
    expect(w.statuses).toEqual([ServingStatus.SERVICE_UNKNOWN, ServingStatus.SERVING]);
  });

  it("on shutdown: every status turns NOT_SERVING, Watchers see it, then their streams end; Checks answer NOT_SERVING", async () => {
    const server = watch(client, "");
    const keys = watch(client, "charter.v1.KeyService");
    await Promise.all([server.received(1), keys.received(1)]);

    shutdown.abort();
    await expect(
      within(server.ended, 1_000, "the Watch of the server to end"),
    ).rejects.toMatchObject({ code: code.UNAVAILABLE, details: "server shutting down" });
    await expect(within(keys.ended, 1_000, "the Watch of KeyService to end")).rejects.toMatchObject(
      { code: code.UNAVAILABLE },
    );
    expect(server.statuses).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
    expect(keys.statuses).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);

    // The transport is still up here (as during a drain): new Checks answer, and say NOT_SERVING.
    await expect(client.check({ service: "" })).resolves.toMatchObject({
      status: ServingStatus.NOT_SERVING,
    });
    await expect(client.check({ service: "charter.v1.KeyService" })).resolves.toMatchObject({
      status: ServingStatus.NOT_SERVING,
    });
  });
});
