import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { describePostgres, POSTGRES_URL, testSchema } from "../support/postgres.js";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";

// PostgreSQL made unreachable behind a loopback TCP proxy this test runs (the shared server is
// never touched): every RPC fails UNAVAILABLE and nothing is allowed; when the proxy forwards
// again, the pool reconnects and the same server answers without a restart.

const UNAVAILABLE = { code: 14, details: "the store is unavailable; nothing was decided" };
const PASSWORD = "s3cr3t-pw"; // trust auth ignores it; it must never reach a log line or a status

describePostgres("a Charter whose PostgreSQL becomes unreachable", () => {
  const schema = testSchema("unavailable");
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString("utf8"));
      done();
    },
  });
  let proxy: TcpProxy;
  let charter: TestCharter;
  let token: string;

  beforeAll(async () => {
    await schema.create();
    const direct = new URL(POSTGRES_URL);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || "5432") });
    const proxied = new URL(schema.url);
    proxied.host = `127.0.0.1:${proxy.port}`;
    proxied.password = PASSWORD;
    charter = await startTestCharter({
      config: { database: proxied.href },
      log: pino({ level: "info" }, sink),
    });
    token = (
      await charter.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:w",
        owner: "ana@example.com",
        purpose: "p",
      })
    ).grantToken;
  });
  afterAll(async () => {
    await charter.stop();
    await proxy.close();
    await schema.drop();
  });

  const search = (callId: string) => ({
    grantToken: token,
    call: { callId, toolName: "web_search", argumentsJson: '{"query":"charter"}' },
  });
  const decisionOf = async (callId: string) =>
    (await charter.clients.authority.authorize(search(callId))).verdict?.decision;

  /** Every kind of call the server answers from the store, each expected to fail UNAVAILABLE. */
  async function expectAllUnavailable(label: string) {
    await expect(charter.clients.authority.authorize(search(`${label}-1`))).rejects.toMatchObject(
      UNAVAILABLE,
    );
    await expect(
      charter.clients.authority.batchAuthorize({
        grantToken: token,
        items: [search(`${label}-2`), search(`${label}-3`)],
      }),
    ).rejects.toMatchObject(UNAVAILABLE);
    await expect(charter.clients.catalog.getCatalog({ grantToken: token })).rejects.toMatchObject(
      UNAVAILABLE,
    );
    await expect(
      charter.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:x",
        owner: "ana@example.com",
        purpose: "p",
      }),
    ).rejects.toMatchObject(UNAVAILABLE);
  }

  /** Polls Authorize until it answers; answers the verdict and how long recovery took. */
  async function recovered(label: string, withinMs: number) {
    const started = Date.now();
    for (let i = 0; ; i++) {
      try {
        return { decision: await decisionOf(`${label}-${i}`), ms: Date.now() - started };
      } catch (err) {
        expect(err).toMatchObject(UNAVAILABLE);
        if (Date.now() - started > withinMs) throw new Error(`not recovered after ${withinMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  it("fails every call UNAVAILABLE while connections are refused, and recovers by itself", async () => {
    expect(await decisionOf("before")).toBe(Decision.ALLOW);
    proxy.cut();
    await expectAllUnavailable("cut");
    proxy.restore();
    const back = await recovered("after-cut", 5_000);
    expect(back.decision).toBe(Decision.ALLOW);
  });

  it("fails UNAVAILABLE within the statement timeout when the database goes silent, and recovers", async () => {
    expect(await decisionOf("before-stall")).toBe(Decision.ALLOW);
    proxy.stall();
    const started = Date.now();
    await expect(charter.clients.authority.authorize(search("stalled"))).rejects.toMatchObject(
      UNAVAILABLE,
    );
    expect(Date.now() - started).toBeLessThan(9_000); // 5 s connect or statement timeout, plus 1 s client-side
    proxy.restore();
    expect((await recovered("after-stall", 5_000)).decision).toBe(Decision.ALLOW);
  }, 30_000);

  it("never writes the database password to the log", () => {
    const log = chunks.join("");
    expect(log).toMatch(/"status":"UNAVAILABLE"/);
    expect(log).not.toContain(PASSWORD);
  });
});
