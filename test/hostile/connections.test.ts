import { create, toBinary } from "@bufbuild/protobuf";
import { connect as http2Connect } from "node:http2";
import { connect as netConnect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverOptions } from "../../src/app/limits.js";
import { DEFAULTS } from "../../src/config/config.js";
import { BatchAuthorizeRequestSchema } from "../../src/gen/charter/v1/authority_pb.js";
import { createCharterClients } from "../../src/client/index.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { unbudgetedPolicy } from "../support/unbudgeted-policy.js";

// "20,000 idle sockets locked every other client out"; "unread BatchAuthorize responses were
// buffered without limit". Against the real server, with small limits.
let charter: TestCharter;
const policy = unbudgetedPolicy();
beforeAll(async () => {
  // 50 batches of 256 calls under one grant: without a budget, so the call after them is still allowed.
  charter = await startTestCharter({
    config: {
      maxConnections: 6,
      maxConcurrentStreams: 4,
      connectionIdleMs: 500,
      policy: policy.policy,
    },
  });
});
afterAll(async () => {
  await charter.stop();
  policy.remove();
});

const address = () => `127.0.0.1:${charter.server.port}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("connections", () => {
  it("maps every connection setting to a grpc-js option", () => {
    expect(serverOptions({ ...DEFAULTS, catalog: "c", policy: "p" })).toEqual({
      "grpc.enable_channelz": 0,
      "grpc.max_receive_message_length": DEFAULTS.maxMessageBytes,
      "grpc.max_send_message_length": DEFAULTS.maxMessageBytes,
      "grpc.max_concurrent_streams": DEFAULTS.maxConcurrentStreams,
      "grpc-node.max_session_memory": DEFAULTS.maxSessionMemoryMib,
      "grpc.keepalive_time_ms": DEFAULTS.keepaliveTimeMs,
      "grpc.keepalive_timeout_ms": DEFAULTS.keepaliveTimeoutMs,
      "grpc.max_connection_idle_ms": DEFAULTS.connectionIdleMs,
      "grpc.max_connection_age_ms": DEFAULTS.connectionAgeMs,
      "grpc.max_connection_age_grace_ms": DEFAULTS.connectionAgeGraceMs,
    });
  });

  it("keeps serving new clients while silent sockets flood the connection cap", async () => {
    const sockets: Socket[] = Array.from({ length: 40 }, () =>
      netConnect(charter.server.port, "127.0.0.1").on("error", () => undefined),
    );
    await sleep(200);
    expect(charter.server.connections()).toBeLessThanOrEqual(6);
    const clients = createCharterClients({ address: address() });
    try {
      expect((await clients.keys.getJwks({}, { timeoutMs: 3000 })).jwksJson).toContain("keys");
      expect(charter.server.connections()).toBeLessThanOrEqual(6);
    } finally {
      clients.close();
      for (const s of sockets) s.destroy();
    }
  });

  it("closes a connection that spoke and then stayed idle", async () => {
    const clients = createCharterClients({ address: address() });
    await clients.keys.getJwks({});
    const before = charter.server.connections();
    expect(before).toBeGreaterThanOrEqual(1);
    await expect.poll(() => charter.server.connections(), { timeout: 3000 }).toBeLessThan(before);
    clients.close();
  });

  it("bounds unread BatchAuthorize responses per connection, serves others meanwhile, and releases them when the client leaves", async () => {
    const { grantToken } = await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "agent:unread",
      owner: "ana@example.com",
      purpose: "unread",
    });
    const items = Array.from({ length: 256 }, (_, i) => ({
      call: { callId: `u${i}`, toolName: "web_search", argumentsJson: '{"query":"unread"}' },
    }));
    const body = toBinary(
      BatchAuthorizeRequestSchema,
      create(BatchAuthorizeRequestSchema, { grantToken, items }),
    );
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    frame.set(body, 5);
    let decided = 0;
    const store = charter.server.context.store as {
      commitDecision: (...a: never[]) => Promise<unknown>;
    };
    const commit = store.commitDecision.bind(store);
    store.commitDecision = (...a) => ((decided += 1), commit(...a));
    const session = http2Connect(`http://${address()}`).on("error", () => undefined);
    for (let i = 0; i < 50; i++) {
      const stream = session.request({
        ":method": "POST",
        ":path": "/charter.v1.AuthorityService/BatchAuthorize",
        "content-type": "application/grpc",
        te: "trailers",
      });
      stream.on("error", () => undefined);
      stream.end(frame);
      stream.pause();
    }
    await sleep(1500);
    // At most maxConcurrentStreams (4) batches are served on that connection while none is read.
    expect(decided).toBeLessThanOrEqual(4 * 256);
    const clients = createCharterClients({ address: address() });
    try {
      const { verdict } = await clients.authority.authorize(
        {
          grantToken,
          call: { callId: "n", toolName: "web_search", argumentsJson: '{"query":"q"}' },
        },
        { timeoutMs: 3000 },
      );
      expect(verdict?.receipt).not.toBe("");
    } finally {
      clients.close();
      session.destroy();
    }
    await expect.poll(() => charter.server.connections(), { timeout: 3000 }).toBe(0);
  });
});
