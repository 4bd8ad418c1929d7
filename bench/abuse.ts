/**
 * An abusive client beside a normal one, against a real `charter serve` process on loopback.
 * Prints the normal client's p50/p99 with the abuser against a baseline measured first in the
 * same run, and the server's peak RSS (VmHWM from /proc/<pid>/status). Bounded: every loop stops
 * by itself.
 *
 *   npm run bench:abuse
 *
 * The abuser (a child process, so its CPU competes as another client's would) runs three attacks
 * at once: Authorize calls with 3.8 MB of arguments, BatchAuthorize requests whose responses it
 * never reads, and idle TCP connections.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect as http2Connect, type ClientHttp2Session } from "node:http2";
import { connect as netConnect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createCharterClients } from "../src/client/index.js";
import { DEFAULTS } from "../src/config/config.js";
import { BatchAuthorizeRequestSchema } from "../src/gen/charter/v1/authority_pb.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NORMAL_CALLS = Number(process.env["BENCH_CALLS"] ?? 1500);
const ABUSE_SECONDS = Number(process.env["BENCH_ABUSE_SECONDS"] ?? 30);
/** Which attacks the abuser runs (comma-separated): oversized, unread, idle. */
const ATTACKS = new Set((process.env["BENCH_ATTACKS"] ?? "oversized,unread,idle").split(","));

const args = process.argv.slice(2);
if (args[0] === "--abuser") await abuse(Number(args[1]), ABUSE_SECONDS * 1000);
else await main();

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "charter-abuse-"));
  const configFile = join(dir, "charter.json");
  const limits = {
    maxConnections: 256,
    maxConcurrentStreams: Number(process.env["BENCH_STREAMS"] ?? DEFAULTS.maxConcurrentStreams),
    maxSessionMemoryMib: Number(process.env["BENCH_SESSION_MIB"] ?? DEFAULTS.maxSessionMemoryMib),
    connectionIdleMs: 5_000,
  };
  writeFileSync(
    configFile,
    JSON.stringify({
      listen: "127.0.0.1:0",
      dataDir: join(dir, "data"),
      catalog: join(ROOT, "fixtures/catalog.yaml"),
      policy: join(ROOT, "fixtures/policy.yaml"),
      logLevel: "warn",
      ...limits,
    }),
  );
  const server = spawn(
    process.execPath,
    [join(ROOT, "dist/cli/bin.js"), "serve", "--config", configFile],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  try {
    const port = await serverPort(server);
    const address = `127.0.0.1:${port}`;
    const baseline = await normalClient(address, NORMAL_CALLS);
    const afterBaseline = memory(server.pid as number);
    const abuser = spawn(
      process.execPath,
      [fileURLToPath(import.meta.url), "--abuser", String(port)],
      { stdio: "inherit" },
    );
    await sleep(3_000); // let the abuse build up
    const loaded = await normalClient(address, NORMAL_CALLS);
    const during = memory(server.pid as number);
    abuser.kill();
    await sleep(6_000);
    const after = memory(server.pid as number);
    const ratio = (a: number, b: number) => (a / b).toFixed(2);
    console.log(JSON.stringify({ limits, normalCalls: NORMAL_CALLS, attacks: [...ATTACKS] }));
    console.log(
      `normal client alone:        p50 ${baseline.p50.toFixed(2)} ms  p99 ${baseline.p99.toFixed(2)} ms  (${baseline.failed} failed)`,
    );
    console.log(
      `normal client beside abuse: p50 ${loaded.p50.toFixed(2)} ms  p99 ${loaded.p99.toFixed(2)} ms  (${loaded.failed} failed)`,
    );
    console.log(
      `ratio with/without abuse:   p50 ${ratio(loaded.p50, baseline.p50)}x  p99 ${ratio(loaded.p99, baseline.p99)}x  (goal: p99 within 3x)`,
    );
    console.log(
      `server RSS: after baseline ${afterBaseline.rssMb} MB, during abuse ${during.rssMb} MB, 6 s after the abuser left ${after.rssMb} MB; peak (VmHWM) ${after.peakMb} MB`,
    );
  } finally {
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Waits for the server to log its address (on stdout or stderr). */
function serverPort(server: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const read = (chunk: Buffer) => {
      seen += chunk.toString();
      const m = /(?:"address":"|listening on )127\.0\.0\.1:(\d+)/.exec(seen);
      if (m) resolve(Number(m[1]));
    };
    server.stdout?.on("data", read);
    server.stderr?.on("data", read);
    server.once("exit", (code) =>
      reject(new Error(`the server exited (${String(code)}) before serving`)),
    );
  });
}

/** Sequential Authorize calls with small, valid arguments; latencies in ms. */
async function normalClient(
  address: string,
  calls: number,
): Promise<{ p50: number; p99: number; failed: number }> {
  const clients = createCharterClients({ address });
  try {
    const { grantToken } = await clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "agent:normal",
      owner: "ana@example.com",
      purpose: "bench",
    });
    const times: number[] = [];
    let failed = 0;
    for (let i = 0; i < calls; i++) {
      const started = performance.now();
      try {
        await clients.authority.authorize(
          {
            grantToken,
            call: { callId: `n${i}`, toolName: "web_search", argumentsJson: '{"query":"weather"}' },
          },
          { timeoutMs: 5_000 },
        );
      } catch {
        failed += 1;
      }
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) =>
      times[Math.min(times.length - 1, Math.floor(q * times.length))] as number;
    return { p50: at(0.5), p99: at(0.99), failed };
  } finally {
    clients.close();
  }
}

function memory(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rssMb: Math.round(kb("VmRSS") / 1024), peakMb: Math.round(kb("VmHWM") / 1024) };
}

/** The abuser: three attacks at once, for `ms` milliseconds. */
async function abuse(port: number, ms: number): Promise<void> {
  const until = Date.now() + ms;
  const address = `127.0.0.1:${port}`;
  const clients = createCharterClients({
    address,
    channelOptions: { "grpc.max_send_message_length": -1 },
  });
  const { grantToken } = await clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:abuser",
    owner: "ana@example.com",
    purpose: "abuse",
  });
  const sockets = ATTACKS.has("idle") ? idleConnections(port, 2_000) : [];
  const sessions = ATTACKS.has("unread") ? unreadBatches(port, grantToken, 2_000) : [];
  const huge = JSON.stringify({ query: "x", junk: "y".repeat(3_800_000) });
  const oversized = Array.from({ length: ATTACKS.has("oversized") ? 8 : 0 }, async () => {
    while (Date.now() < until) {
      await clients.authority
        .authorize(
          { grantToken, call: { callId: "big", toolName: "web_search", argumentsJson: huge } },
          { timeoutMs: 2_000 },
        )
        .catch(() => undefined);
    }
  });
  await Promise.all(oversized);
  await sleep(Math.max(0, until - Date.now()));
  for (const s of sockets) s.destroy();
  for (const s of sessions) s.destroy();
  clients.close();
}

/** `count` TCP connections that never send a byte. */
function idleConnections(port: number, count: number): Socket[] {
  return Array.from({ length: count }, () =>
    netConnect(port, "127.0.0.1").on("error", () => undefined),
  );
}

/** BatchAuthorize requests of 256 allowed calls on raw HTTP/2 sessions, whose responses are never read. */
function unreadBatches(port: number, grantToken: string, count: number): ClientHttp2Session[] {
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
  const sessions = Array.from({ length: 4 }, () =>
    http2Connect(`http://127.0.0.1:${port}`).on("error", () => undefined),
  );
  for (let i = 0; i < count; i++) {
    const session = sessions[i % sessions.length] as ClientHttp2Session;
    const stream = session.request({
      ":method": "POST",
      ":path": "/charter.v1.AuthorityService/BatchAuthorize",
      "content-type": "application/grpc",
      te: "trailers",
    });
    stream.on("error", () => undefined);
    stream.end(frame);
    stream.pause(); // never read: the responses pile up on the server unless it bounds them
  }
  return sessions;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
