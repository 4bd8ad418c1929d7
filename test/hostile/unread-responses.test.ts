import { create, toBinary } from "@bufbuild/protobuf";
import { connect as http2Connect, type ClientHttp2Session } from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetCatalogRequestSchema } from "../../src/gen/charter/v1/catalog_pb.js";
import { createCharterClients } from "../../src/client/index.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// "Unread responses are bounded per connection but not in total: 100 sessions held 587 MB, not
// released after they disconnected." Against the real server: 1 MiB of unread responses in all.
let charter: TestCharter;
const MIB = 1024 * 1024;
beforeAll(async () => {
  charter = await startTestCharter({
    config: {
      maxConnections: 64,
      maxConcurrentStreams: 4,
      maxUnreadResponseMib: 1,
    },
  });
});
afterAll(async () => {
  await charter.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A gRPC frame of a GetCatalog request (its answer is about 37 KB, and costs no write). */
async function catalogFrame(): Promise<{ frame: Buffer; grantToken: string }> {
  const { grantToken } = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:unread-total",
    owner: "ana@example.com",
    purpose: "unread",
  });
  const body = toBinary(GetCatalogRequestSchema, create(GetCatalogRequestSchema, { grantToken }));
  const frame = Buffer.alloc(5 + body.length);
  frame.writeUInt32BE(body.length, 1);
  frame.set(body, 5);
  return { frame, grantToken };
}

describe("unread responses over every connection", () => {
  it("stay under maxUnreadResponseMib in total: the connection holding the most is closed, others are served, and all is given back when the abuser leaves", async () => {
    const { frame, grantToken } = await catalogFrame();
    const sessions: ClientHttp2Session[] = [];
    let closedByServer = 0;
    let peak = 0;
    for (let s = 0; s < 16; s++) {
      // A stream window of 0 bytes: the server can send no response data until the client reads.
      const session = http2Connect(`http://127.0.0.1:${charter.server.port}`, {
        settings: { initialWindowSize: 0 },
      })
        .on("error", () => undefined)
        .on("close", () => (closedByServer += 1));
      sessions.push(session);
      for (let i = 0; i < 4; i++) {
        const stream = session.request({
          ":method": "POST",
          ":path": "/charter.v1.CatalogService/GetCatalog",
          "content-type": "application/grpc",
          te: "trailers",
        });
        stream.on("error", () => undefined);
        stream.end(frame);
        stream.pause(); // never read
      }
    }
    const watch = setInterval(() => {
      peak = Math.max(peak, charter.server.connectionStats().unreadResponseBytes);
    }, 5);
    try {
      // 64 responses of about 37 KB each, 2.3 MB: over 1 MiB if nothing bounded the total.
      await expect.poll(() => closedByServer, { timeout: 5_000, interval: 50 }).toBeGreaterThan(0);
      await sleep(500);
      expect(peak).toBeGreaterThan(0);
      expect(charter.server.connectionStats().unreadResponseBytes).toBeLessThanOrEqual(MIB);
      // A client that reads is served meanwhile.
      const clients = createCharterClients({ address: `127.0.0.1:${charter.server.port}` });
      try {
        const { verdict } = await clients.authority.authorize(
          {
            grantToken,
            call: { callId: "reader", toolName: "web_search", argumentsJson: '{"query":"q"}' },
          },
          { timeoutMs: 3_000 },
        );
        expect(verdict?.receipt).not.toBe("");
      } finally {
        clients.close();
      }
    } finally {
      clearInterval(watch);
      for (const s of sessions) s.destroy();
    }
    // The bound is checked at every response handed over: it is never more than one response past.
    expect(peak).toBeLessThanOrEqual(MIB + 512 * 1024);
    await expect
      .poll(() => charter.server.connectionStats(), { timeout: 3_000 })
      .toEqual({ open: 1, preAuth: 0, unreadResponseBytes: 0 }); // the fixture's own client stays
  });
});
