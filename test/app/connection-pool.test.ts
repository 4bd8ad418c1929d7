import { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { createConnectionPool } from "../../src/app/connection-pool.js";

/** A stand-in socket: what the pool reads of one (peer, bytes read) and does to it (destroy). */
class FakeSocket extends EventEmitter {
  destroyed = false;
  constructor(
    readonly remotePort: number,
    public bytesRead = 0,
  ) {
    super();
  }
  readonly remoteAddress = "127.0.0.1";
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit("close");
  }
}

const limits = { maxConnections: 10, maxPreAuthConnections: 3, maxUnreadResponseBytes: 1e9 };
const admit = (pool: ReturnType<typeof createConnectionPool>, s: FakeSocket) =>
  pool.admit(s as unknown as Socket);

describe("createConnectionPool() eviction order", () => {
  it("closes idle connections before ones still arriving, and never one whose call is being authenticated", () => {
    const pool = createConnectionPool(limits);
    const calling = new FakeSocket(1, 300);
    const idle = new FakeSocket(2, 60);
    const arriving = new FakeSocket(3, 0);
    for (const s of [calling, idle, arriving]) admit(pool, s);
    const settle = pool.ledger.calling("127.0.0.1:1");
    admit(pool, new FakeSocket(4, 0));
    expect([calling.destroyed, idle.destroyed, arriving.destroyed]).toEqual([false, true, false]);
    admit(pool, new FakeSocket(5, 0));
    // Only arriving ones and the calling one are left: the oldest arriving one goes, not the caller.
    expect([calling.destroyed, arriving.destroyed]).toEqual([false, true]);
    settle();
    calling.bytesRead = 300;
    admit(pool, new FakeSocket(6, 0));
    expect(calling.destroyed).toBe(true);
    expect(pool.stats()).toMatchObject({ open: 3, preAuth: 3 });
  });

  it("closes a connection silent past the arrival grace first", () => {
    const pool = createConnectionPool({ ...limits, arrivalGraceMs: 0 });
    const idle = new FakeSocket(1, 60);
    const silent = new FakeSocket(2, 0);
    admit(pool, idle);
    admit(pool, silent);
    admit(pool, new FakeSocket(3, 60));
    admit(pool, new FakeSocket(4, 0));
    expect([idle.destroyed, silent.destroyed]).toEqual([false, true]);
  });

  it("passes the pre-auth cap for the moment when every pre-auth connection is calling", () => {
    const pool = createConnectionPool(limits);
    for (const port of [1, 2, 3]) {
      admit(pool, new FakeSocket(port, 300));
      pool.ledger.calling(`127.0.0.1:${port}`);
    }
    expect(admit(pool, new FakeSocket(4, 0))).toBe(true);
    expect(pool.stats()).toMatchObject({ open: 4, preAuth: 4 });
  });
});
