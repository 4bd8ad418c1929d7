import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createPromiseClient, type PromiseClient } from "../../src/client/index.js";
import {
  Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../src/gen/grpc/health/v1/health_pb.js";
import { startTestCharter } from "../support/charter-server.js";
import { within } from "../support/grpc.js";
import { serveProcess } from "../support/serve-process.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Opens a health Watch of the server; `first` resolves with the first status, `ended` when the stream ends. */
function openWatch(client: PromiseClient<typeof Health>) {
  const statuses: ServingStatus[] = [];
  let gotFirst!: () => void;
  const first = new Promise<void>((resolve) => (gotFirst = resolve));
  const ended = (async () => {
    for await (const r of client.watch({ service: "" })) {
      statuses.push(r.status);
      gotFirst();
    }
  })().then(
    () => "ok",
    (err: unknown) => (err as { code: number }).code,
  );
  return { statuses, first, ended };
}

describe("shutdown with an open health Watch", () => {
  it("stop() resolves well under the grace period; the Watcher sees NOT_SERVING, then its stream ends", async () => {
    const charter = await startTestCharter();
    dirs.push(charter.dataDir);
    const health = createPromiseClient(Health, { address: `127.0.0.1:${charter.server.port}` });
    const watch = openWatch(health);
    await within(watch.first, 2_000, "the first health status");

    const started = Date.now();
    await charter.server.stop(10_000);
    const took = Date.now() - started;
    expect(took).toBeLessThan(1_000);
    expect(await within(watch.ended, 1_000, "the Watch to end")).toBe(14);
    expect(watch.statuses).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
    health.close();
    charter.clients.close();
  });

  it("`charter serve` exits within 1 s of SIGTERM with a Watch open, after the Watcher saw NOT_SERVING", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "charter-sigterm-"));
    dirs.push(dataDir);
    const served = await serveProcess({ dataDir });
    const { address, exited } = served;
    const health = createPromiseClient(Health, { address });
    try {
      const watch = openWatch(health);
      await within(watch.first, 2_000, "the first health status");

      const sent = Date.now();
      served.signal("SIGTERM");
      const { code, at } = await within(exited, 5_000, "charter serve to exit");
      const took = at - sent;
      console.log(`charter serve exited ${took} ms after SIGTERM with a Watch open`);
      expect(code).toBe(0);
      expect(took).toBeLessThan(1_000);
      expect(await within(watch.ended, 1_000, "the Watch to end")).toBe(14);
      expect(watch.statuses).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
    } finally {
      health.close();
      await served.kill();
    }
  });
});
