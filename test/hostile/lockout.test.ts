import { connect as http2Connect, type ClientHttp2Session } from "node:http2";
import { connect as netConnect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/authority/index.js";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// "Without any credential or RPC, 1,024 idle HTTP/2 sessions per worker (or raw sockets that
// sent one byte) lock every client out, admin-key holders included." Against the real server,
// with small caps: 12 connections, 8 of them pre-auth.
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `count` HTTP/2 sessions that complete the preface and settings, then make no call. */
async function idleSessions(port: number, count: number): Promise<ClientHttp2Session[]> {
  const sessions: ClientHttp2Session[] = [];
  for (let i = 0; i < count; i++) {
    sessions.push(http2Connect(`http://127.0.0.1:${port}`).on("error", () => undefined));
    await sleep(5); // each lands in its own turn, so the oldest are the attacker's first
  }
  return sessions;
}

/** `count` TCP connections that sent one byte and then nothing. */
async function oneByteSockets(port: number, count: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i++) {
    const s = netConnect(port, "127.0.0.1").on("error", () => undefined);
    s.write("P");
    sockets.push(s);
    await sleep(5);
  }
  return sockets;
}

describe("connection lockout (with API keys)", () => {
  let charter: TestCharter;
  let bearer: Record<string, string>;
  beforeAll(async () => {
    charter = await startTestCharter({
      config: { maxConnections: 12, maxPreAuthConnections: 8, connectionIdleMs: 60_000 },
    });
    const { secret } = await createApiKey(charter.server.context, {
      principal: "ops",
      roles: ["admin"],
    });
    bearer = { authorization: `Bearer ${secret}` };
  });
  afterAll(async () => {
    await charter.stop();
  });
  const address = () => `127.0.0.1:${charter.server.port}`;
  const adminCall = (clients: CharterClients) =>
    clients.approvals.listApprovals({ owner: "ana@example.com" }, { timeoutMs: 3_000 });

  it.each([
    ["idle HTTP/2 sessions", idleSessions],
    ["raw sockets that sent one byte", oneByteSockets],
  ] as const)(
    "answers an admin-key client while %s hold every pre-auth slot",
    async (_, attack) => {
      // An admin connected before the attack: once authenticated, its connection is not pre-auth.
      const before = createCharterClients({ address: address(), metadata: bearer });
      await adminCall(before);
      const attackers: { destroy(): void }[] = await attack(charter.server.port, 40);
      try {
        await sleep(300);
        const held = charter.server.connectionStats();
        expect(held.preAuth).toBe(8);
        expect(held.open).toBe(9);
        // The one connected before is still served, and a new one gets a connection and an answer.
        await expect(adminCall(before)).resolves.toBeDefined();
        const after = createCharterClients({ address: address(), metadata: bearer });
        try {
          await expect(adminCall(after)).resolves.toBeDefined();
          expect(charter.server.connectionStats().open).toBeLessThanOrEqual(12);
        } finally {
          after.close();
        }
      } finally {
        before.close();
        for (const a of attackers) a.destroy();
      }
      await expect.poll(() => charter.server.connections(), { timeout: 3_000 }).toBe(0);
    },
  );

  it("keeps a caller without a valid key pre-auth, so it cannot take authenticated room", async () => {
    const stranger = createCharterClients({
      address: address(),
      metadata: { authorization: "Bearer ck_not-a-key" },
    });
    try {
      await expect(adminCall(stranger)).rejects.toMatchObject({ code: 16 });
      expect(charter.server.connectionStats()).toMatchObject({ open: 1, preAuth: 1 });
    } finally {
      stranger.close();
    }
  });
});

describe("connection lockout (protected mode: every local caller is the local operator)", () => {
  let charter: TestCharter;
  beforeAll(async () => {
    charter = await startTestCharter({
      config: { maxConnections: 12, maxPreAuthConnections: 8, connectionIdleMs: 60_000 },
    });
  });
  afterAll(async () => {
    await charter.stop();
  });

  it("takes a connection out of the pre-auth pool at its first call, and serves a new client while idle sessions hold the rest", async () => {
    const attackers = await idleSessions(charter.server.port, 40);
    const clients = createCharterClients({ address: `127.0.0.1:${charter.server.port}` });
    try {
      await sleep(200);
      expect(charter.server.connectionStats().preAuth).toBe(8);
      expect((await clients.keys.getJwks({}, { timeoutMs: 3_000 })).jwksJson).toContain("keys");
      expect(charter.server.connectionStats().preAuth).toBe(7);
    } finally {
      clients.close();
      for (const a of attackers) a.destroy();
    }
  });
});

/**
 * An attacker reconnecting in a tight loop: `count` idle HTTP/2 sessions and as many sockets that
 * sent one byte, each opened again the moment the server closes it, so its connections stay young.
 */
function reconnectingAttacker(port: number, count: number): { stop(): void } {
  let stopped = false;
  const open = new Set<{ destroy(): void }>();
  const keep = (make: () => { destroy(): void; once(e: "close", f: () => void): unknown }) => {
    if (stopped) return;
    const s = make();
    open.add(s);
    s.once("close", () => {
      open.delete(s);
      setImmediate(() => keep(make));
    });
  };
  const session = () => http2Connect(`http://127.0.0.1:${port}`).on("error", () => undefined);
  const oneByte = () => {
    const s = netConnect(port, "127.0.0.1").on("error", () => undefined);
    s.write("P");
    return s;
  };
  for (let i = 0; i < count; i++) {
    keep(session);
    keep(oneByte);
  }
  return {
    stop() {
      stopped = true;
      for (const s of open) s.destroy();
    },
  };
}

describe("connection lockout by an attacker reconnecting in a tight loop", () => {
  const config = { maxConnections: 12, maxPreAuthConnections: 8, connectionIdleMs: 60_000 };

  it("answers a new admin-key client, 20 times in a row, while the attacker holds every pre-auth slot", async () => {
    const charter = await startTestCharter({ config });
    const { secret } = await createApiKey(charter.server.context, {
      principal: "ops",
      roles: ["admin"],
    });
    const attacker = reconnectingAttacker(charter.server.port, 20);
    try {
      await sleep(300);
      expect(charter.server.connectionStats().preAuth).toBe(8);
      for (let i = 0; i < 20; i++) {
        const client = createCharterClients({
          address: `127.0.0.1:${charter.server.port}`,
          metadata: { authorization: `Bearer ${secret}` },
        });
        try {
          await expect(
            client.approvals.listApprovals({ owner: "ana@example.com" }, { timeoutMs: 3_000 }),
          ).resolves.toBeDefined();
        } finally {
          client.close();
        }
      }
    } finally {
      attacker.stop();
      await charter.stop();
    }
  });

  it("answers a new protected-mode client, 20 times in a row, while the attacker holds every pre-auth slot", async () => {
    const charter = await startTestCharter({ config });
    const attacker = reconnectingAttacker(charter.server.port, 20);
    try {
      await sleep(300);
      expect(charter.server.connectionStats().preAuth).toBe(8);
      for (let i = 0; i < 20; i++) {
        const client = createCharterClients({ address: `127.0.0.1:${charter.server.port}` });
        try {
          const { jwksJson } = await client.keys.getJwks({}, { timeoutMs: 3_000 });
          expect(jwksJson).toContain("keys");
        } finally {
          client.close();
        }
      }
    } finally {
      attacker.stop();
      await charter.stop();
    }
  });
});
