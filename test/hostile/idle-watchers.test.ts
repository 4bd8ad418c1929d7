import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/authority/index.js";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// "Idle WatchApprovals streams cost CPU: 4,800 of them kept a worker at 100 % CPU and a gateway's
// p50 went from 2.3 to 107 ms." Against the real server, in this process (its CPU time is ours).
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const OWNER = "ana@example.com";

/** Opens `count` WatchApprovals streams that stay open (and idle) until `signal` aborts. */
function openWatchers(
  clients: CharterClients,
  count: number,
  signal: AbortSignal,
): Promise<unknown>[] {
  return Array.from({ length: count }, async () => {
    for await (const _ of clients.approvals.watchApprovals({ owner: OWNER }, { signal })) {
      // idle: no event comes
    }
  }).map((p) => p.catch(() => undefined));
}

/** CPU time (user + system) this process spends over `ms` of wall time, in ms. */
async function cpuOver(ms: number): Promise<number> {
  const start = process.cpuUsage();
  await sleep(ms);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** The median and p90 of `n` sequential GetJwks calls, in ms. */
async function latency(clients: CharterClients, n: number): Promise<{ p50: number; p90: number }> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await clients.keys.getJwks({}, { timeoutMs: 5_000 });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return {
    p50: times[Math.floor(n / 2)] as number,
    p90: times[Math.floor(n * 0.9)] as number,
  };
}

describe("idle WatchApprovals streams", () => {
  let charter: TestCharter;
  beforeAll(async () => {
    charter = await startTestCharter({
      config: {
        maxConcurrentStreams: 2_000,
        maxWatchStreams: 2_000,
        maxWatchStreamsPerCaller: 2_000,
      },
    });
  });
  afterAll(async () => {
    await charter.stop();
  });

  it("cost the server no CPU while nothing changes, and a normal client's latency stays put", async () => {
    const normal = createCharterClients({ address: `127.0.0.1:${charter.server.port}` });
    const watchers = createCharterClients({ address: `127.0.0.1:${charter.server.port}` });
    const stop = new AbortController();
    try {
      await latency(normal, 50); // warm up
      const before = await latency(normal, 200);
      const idle = await cpuOver(2_000);
      const streams = openWatchers(watchers, 1_000, stop.signal);
      await expect
        .poll(() => charter.server.context.approvalFeed.waiting(), { timeout: 15_000 })
        .toBe(1_000);
      await sleep(500);
      const watched = await cpuOver(2_000);
      const beside = await latency(normal, 200);
      // 1,000 watchers polling twice a second each cost several hundred ms of CPU per second here.
      expect(watched - idle).toBeLessThan(100);
      expect(beside.p50 / before.p50).toBeLessThan(3);
      stop.abort();
      await Promise.allSettled(streams);
    } finally {
      stop.abort();
      normal.close();
      watchers.close();
    }
    await expect
      .poll(() => charter.server.context.approvalFeed.waiting(), { timeout: 5_000 })
      .toBe(0);
  }, 60_000);

  it("still wakes a watcher at once for an event another process wrote (one poll for all watchers)", async () => {
    // A second server on the same store: its approval events reach this one only through the store.
    const other = await startTestCharter({ dataDir: charter.dataDir });
    const stop = new AbortController();
    try {
      const seen = (async () => {
        for await (const event of charter.clients.approvals.watchApprovals(
          { owner: OWNER },
          { signal: stop.signal },
        ))
          return event;
        return undefined;
      })();
      await expect
        .poll(() => charter.server.context.approvalFeed.waiting(), { timeout: 3_000 })
        .toBe(1);
      const { grantToken } = await other.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:watched",
        owner: OWNER,
        purpose: "watch",
      });
      const { verdict } = await other.clients.authority.authorize({
        grantToken,
        call: {
          callId: "w-1",
          toolName: "charge_payment",
          argumentsJson: JSON.stringify({
            customer_id: "cus_ABC123",
            amount: 90,
            currency: "EUR",
            description: "Monthly plan",
            authorization_code: "SECRET-1",
          }),
        },
      });
      expect(verdict?.approvalId).toMatch(/^apr_/);
      const started = Date.now();
      const event = await seen;
      expect(event?.approval?.id).toBe(verdict?.approvalId);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      stop.abort();
      await other.stop({ keepData: true });
    }
  });
});

describe("WatchApprovals stream caps", () => {
  let charter: TestCharter;
  const keys: Record<string, string> = {};
  beforeAll(async () => {
    charter = await startTestCharter({
      config: { maxWatchStreams: 3, maxWatchStreamsPerCaller: 2 },
    });
    for (const principal of ["alice", "bob"]) {
      const { secret } = await createApiKey(charter.server.context, {
        principal,
        roles: ["admin"],
      });
      keys[principal] = `Bearer ${secret}`;
    }
  });
  afterAll(async () => {
    await charter.stop();
  });

  /** Opens a stream as `who`; resolves with its first error code once refused, or "open" after 300 ms. */
  const watchAs = (who: string, signal: AbortSignal): Promise<number | "open"> => {
    const clients = createCharterClients({
      address: `127.0.0.1:${charter.server.port}`,
      metadata: { authorization: keys[who] as string },
    });
    return new Promise<number | "open">((resolve) => {
      const timer = setTimeout(() => resolve("open"), 300);
      (async () => {
        for await (const _ of clients.approvals.watchApprovals({ owner: OWNER }, { signal })) {
          // idle
        }
      })().catch((err: unknown) => {
        clearTimeout(timer);
        resolve((err as { code?: number }).code ?? -1);
      });
      signal.addEventListener("abort", () => clients.close(), { once: true });
    });
  };

  it("refuses RESOURCE_EXHAUSTED past the per-caller and the total cap, and counts a closed stream out", async () => {
    const RESOURCE_EXHAUSTED = 8;
    const a1 = new AbortController();
    const a2 = new AbortController();
    const rest = new AbortController();
    try {
      expect(await watchAs("alice", a1.signal)).toBe("open");
      expect(await watchAs("alice", a2.signal)).toBe("open");
      // A third for alice: over maxWatchStreamsPerCaller (2).
      expect(await watchAs("alice", rest.signal)).toBe(RESOURCE_EXHAUSTED);
      expect(await watchAs("bob", rest.signal)).toBe("open");
      // A second for bob: under his own cap, over maxWatchStreams (3).
      expect(await watchAs("bob", rest.signal)).toBe(RESOURCE_EXHAUSTED);
      a1.abort();
      await expect
        .poll(() => charter.server.context.approvalFeed.waiting(), { timeout: 3_000 })
        .toBe(2);
      expect(await watchAs("bob", rest.signal)).toBe("open");
    } finally {
      a1.abort();
      a2.abort();
      rest.abort();
    }
  });
});
