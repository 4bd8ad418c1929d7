/**
 * Abusive clients beside a normal one, against a real `charter serve` process on loopback, one
 * phase per group of attacks. For each phase it prints the normal client's p50/p99 beside the
 * abuse as a ratio to a baseline measured first in the same run, how many of its calls failed,
 * the server's CPU while the abuse ran against an idle interval, and its RSS after the abuser
 * left against its RSS before the phase (VmRSS from /proc/<pid>/status). Bounded: every loop
 * stops by itself.
 *
 *   npm run bench:abuse
 *
 * Goals: p99 within 3x, every answer received, RSS back within 10 %. The abuser is a child
 * process (its CPU competes as another client's would). Attacks: `oversized` (Authorize with 3.8
 * MB of arguments), `unread` (BatchAuthorize on raw HTTP/2 sessions that never read), `idle`
 * (TCP connections that send nothing), `lockout` (idle HTTP/2 sessions and sockets that sent one
 * byte, reopened as the server closes them, over every pre-auth slot), `watchers` (4,800 idle
 * WatchApprovals streams on raw HTTP/2 sessions), `flood` (GetGrant calls with a wrong API key, 64
 * in flight on 4 connections: each refused UNAUTHENTICATED and audited), `pattern` (Authorize
 * calls through a delegated grant whose caveat is `^(a+)+$`, with 41-character arguments) and any
 * attack in `REGISTERED_ATTACKS`. `BENCH_PHASES` lists the phases, each a `+`-joined group of
 * attacks, or `all` for every attack at once (default
 * `oversized+unread+idle,lockout,watchers,flood,pattern,all`).
 * The server runs with `--expose-gc`; a full collection is forced before each RSS reading
 * (`bench/abuse-gc.ts`). It writes docs/perf/abuse.md.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect as http2Connect, type ClientHttp2Session } from "node:http2";
import { connect as netConnect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createCharterClients } from "../src/client/index.js";
import { DEFAULTS } from "../src/config/config.js";
import { ActionCaveatsSchema } from "../src/gen/charter/v1/common_pb.js";
import { WatchApprovalsRequestSchema } from "../src/gen/charter/v1/approval_pb.js";
import { BatchAuthorizeRequestSchema } from "../src/gen/charter/v1/authority_pb.js";
import { benchCommand, shortRunNote, writePerfReport } from "./perf-report.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NORMAL_CALLS = Number(process.env["BENCH_CALLS"] ?? 1000);
/** An upper bound: the parent stops the abuser once its phase is measured. */
const ABUSE_SECONDS = Number(process.env["BENCH_ABUSE_SECONDS"] ?? 180);
const WATCHERS = Number(process.env["BENCH_WATCHERS"] ?? 4_800);
/** How long after the abuser leaves RSS is read again. */
const SETTLE_SECONDS = Number(process.env["BENCH_SETTLE_SECONDS"] ?? 6);
/** An attack that is one self-contained function: it runs until `until` (ms since the epoch). */
type Attack = (port: number, grantToken: string, until: number) => Promise<void>;
/** Attacks by name, each one function; every one of them is part of `all`. */
const REGISTERED_ATTACKS: Readonly<Record<string, Attack>> = {
  pattern: patternAttack,
};
/** Every attack at once: the `all` phase. */
const ALL_ATTACKS = ["oversized", "unread", "idle", "lockout", "watchers", "flood"]
  .concat(Object.keys(REGISTERED_ATTACKS))
  .join("+");
/** The attacks of phase `phase`. */
const attacksOf = (phase: string) => (phase === "all" ? ALL_ATTACKS : phase);
/** The phases, each a `+`-joined group of attacks the abuser runs at once. */
const PHASES = (
  process.env["BENCH_PHASES"] ?? "oversized+unread+idle,lockout,watchers,flood,pattern,all"
).split(",");
/** The attacks of this abuser process (set by the parent for its phase). */
const ATTACKS = new Set((process.env["BENCH_ATTACKS"] ?? "").split("+"));

const args = process.argv.slice(2);
if (args[0] === "--abuser") await abuse(Number(args[1]), ABUSE_SECONDS * 1000);
else await main();

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "charter-abuse-"));
  const configFile = join(dir, "charter.json");
  const limits = {
    maxConnections: 512,
    maxPreAuthConnections: 128,
    maxConcurrentStreams: Number(process.env["BENCH_STREAMS"] ?? DEFAULTS.maxConcurrentStreams),
    maxSessionMemoryMib: Number(process.env["BENCH_SESSION_MIB"] ?? DEFAULTS.maxSessionMemoryMib),
    maxUnreadResponseMib: Number(process.env["BENCH_UNREAD_MIB"] ?? DEFAULTS.maxUnreadResponseMib),
    // Lifted so that the watcher attack holds all its streams: what is measured is their idle cost.
    maxWatchStreams: 10_000,
    maxWatchStreamsPerCaller: 10_000,
    connectionIdleMs: 5_000,
  };
  writeFileSync(
    configFile,
    JSON.stringify({
      listen: "127.0.0.1:0",
      // One process, so that the CPU and RSS read from /proc are the server's.
      workers: 1,
      dataDir: join(dir, "data"),
      catalog: join(ROOT, "fixtures/catalog.yaml"),
      policy: join(ROOT, "fixtures/policy.yaml"),
      logLevel: "warn",
      // The quick start's choices: protected mode on loopback, and a store made on first start.
      auth: "none",
      createStore: "if-missing",
      ...limits,
    }),
  );
  const server = spawn(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      pathToFileURL(join(ROOT, "dist-bench/bench/abuse-gc.js")).href,
      join(ROOT, "dist/cli/bin.js"),
      "serve",
      "--config",
      configFile,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const pid = () => server.pid as number;
  try {
    const port = await serverPort(server);
    const address = `127.0.0.1:${port}`;
    await normalClient(address, 200); // warm-up
    const baseline = await normalClient(address, NORMAL_CALLS);
    const idleCpu = await cpuPercent(pid(), 2_000);
    const ratio = (a: number, b: number) => (a / b).toFixed(2);
    console.log(JSON.stringify({ limits, normalCalls: NORMAL_CALLS, phases: PHASES }));
    console.log(
      `baseline: normal client alone p50 ${baseline.p50.toFixed(2)} ms  p99 ${baseline.p99.toFixed(2)} ms  (${baseline.failed} failed); server CPU idle ${idleCpu.toFixed(1)} %; RSS ${memory(pid()).rssMb} MB`,
    );
    const rows: string[][] = [];
    for (const phase of PHASES) {
      const before = await collectedMemory(server);
      const abuser = spawn(
        process.execPath,
        [fileURLToPath(import.meta.url), "--abuser", String(port)],
        { stdio: "inherit", env: { ...process.env, BENCH_ATTACKS: attacksOf(phase) } },
      );
      await sleep(attacksOf(phase).includes("watchers") ? 8_000 : 3_000); // let the abuse build up
      const cpu = await cpuPercent(pid(), 2_000);
      const loaded = await normalClient(address, NORMAL_CALLS);
      const during = memory(pid());
      abuser.kill();
      await new Promise((r) => abuser.once("exit", r));
      await sleep(SETTLE_SECONDS * 1_000);
      const after = await collectedMemory(server);
      const rssChange = ((after.rssMb - before.rssMb) / before.rssMb) * 100;
      console.log(
        `${phase}: normal client beside it p50 ${loaded.p50.toFixed(2)} ms (${ratio(loaded.p50, baseline.p50)}x)  p99 ${loaded.p99.toFixed(2)} ms (${ratio(loaded.p99, baseline.p99)}x, goal 3x)  ${loaded.failed} of ${NORMAL_CALLS} failed`,
      );
      console.log(
        `${phase}: server CPU during abuse ${cpu.toFixed(1)} % (idle ${idleCpu.toFixed(1)} %); RSS before ${before.rssMb} MB, during ${during.rssMb} MB, ${SETTLE_SECONDS} s after the abuser left ${after.rssMb} MB (${rssChange >= 0 ? "+" : ""}${rssChange.toFixed(1)} %, goal within 10 %); peak (VmHWM) ${after.peakMb} MB`,
      );
      rows.push(phaseRow(phase, baseline, loaded, { before, during, after }));
    }
    reportAbuse(limits, baseline, rows);
  } finally {
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The CPU (user + system) process `pid` uses over `ms`, in percent of one core. */
async function cpuPercent(pid: number, ms: number): Promise<number> {
  const ticks = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  };
  const start = ticks();
  await sleep(ms);
  return ((ticks() - start) * 10 * 100) / ms; // 100 ticks per second
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
    // A client that cannot even get its grant (its connection closed under it) fails every call.
    const issued = await clients.grants
      .issueGrant({
        profile: "owner-assistant",
        subject: "agent:normal",
        owner: "ana@example.com",
        purpose: "bench",
      })
      .catch((err: unknown) => {
        console.log(`normal client: IssueGrant failed: ${String(err)}`);
        return undefined;
      });
    if (issued === undefined) return { p50: NaN, p99: NaN, failed: calls };
    const { grantToken } = issued;
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

/** The abuser: its phase's attacks at once, for `ms` milliseconds. */
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
  const lockout = ATTACKS.has("lockout") ? holdPreAuthSlots(port, 600, until) : undefined;
  const watchers = ATTACKS.has("watchers") ? idleWatchers(port, WATCHERS) : [];
  if (ATTACKS.has("flood")) void unauthenticatedFlood(address, until);
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
  const registered = Object.entries(REGISTERED_ATTACKS)
    .filter(([name]) => ATTACKS.has(name))
    .map(([, attack]) => attack(port, grantToken, until));
  await Promise.all([...oversized, ...registered]);
  await sleep(Math.max(0, until - Date.now()));
  await lockout;
  for (const s of sockets) s.destroy();
  for (const s of [...sessions, ...watchers]) s.destroy();
  clients.close();
}

/**
 * `count` idle HTTP/2 sessions and `count` sockets that sent one byte, none making a call; each
 * one the server closes is opened again 50 ms later, until `until`.
 */
async function holdPreAuthSlots(port: number, count: number, until: number): Promise<void> {
  const open = new Set<{ destroy(): void }>();
  const session = (): void => {
    if (Date.now() >= until) return;
    const s = http2Connect(`http://127.0.0.1:${port}`).on("error", () => undefined);
    open.add(s);
    s.once("close", () => {
      open.delete(s);
      setTimeout(session, 50);
    });
  };
  const oneByte = (): void => {
    if (Date.now() >= until) return;
    const s = netConnect(port, "127.0.0.1").on("error", () => undefined);
    s.write("P");
    open.add(s);
    s.once("close", () => {
      open.delete(s);
      setTimeout(oneByte, 50);
    });
  };
  for (let i = 0; i < count; i++) {
    session();
    oneByte();
    if (i % 50 === 0) await sleep(10);
  }
  await sleep(Math.max(0, until - Date.now()));
  for (const s of open) s.destroy();
}

/** `count` WatchApprovals streams, 15 per raw HTTP/2 session, that stay open and idle. */
function idleWatchers(port: number, count: number): ClientHttp2Session[] {
  const body = toBinary(
    WatchApprovalsRequestSchema,
    create(WatchApprovalsRequestSchema, { owner: "ana@example.com" }),
  );
  const frame = Buffer.alloc(5 + body.length);
  frame.writeUInt32BE(body.length, 1);
  frame.set(body, 5);
  const perSession = 15;
  const sessions = Array.from({ length: Math.ceil(count / perSession) }, () =>
    http2Connect(`http://127.0.0.1:${port}`).on("error", () => undefined),
  );
  for (let i = 0; i < count; i++) {
    const stream = (sessions[Math.floor(i / perSession)] as ClientHttp2Session).request({
      ":method": "POST",
      ":path": "/charter.v1.ApprovalService/WatchApprovals",
      "content-type": "application/grpc",
      te: "trailers",
    });
    stream.on("error", () => undefined);
    stream.end(frame);
  }
  return sessions;
}

/**
 * Calls without a valid credential, 16 in flight on each of 4 connections (a stream cap's worth
 * each), until `until`: each is refused UNAUTHENTICATED and goes to the audit log (tallied: one
 * record per peer, RPC, reason and interval). Prints how many were refused per second, every 2 s.
 */
async function unauthenticatedFlood(address: string, until: number): Promise<void> {
  const channels = Array.from({ length: 4 }, () =>
    createCharterClients({
      address,
      metadata: { authorization: "Bearer chk_not-a-key" },
      // A connection of its own each (grpc-js shares one per target otherwise).
      channelOptions: { "grpc.use_local_subchannel_pool": 1 },
    }),
  );
  let refused = 0;
  const report = setInterval(() => {
    console.log(`flood: ${Math.round(refused / 2)} unauthenticated calls refused per second`);
    refused = 0;
  }, 2_000);
  report.unref();
  const caller = async (n: number) => {
    const clients = channels[n % channels.length] as (typeof channels)[number];
    for (let i = 0; Date.now() < until; i++) {
      await clients.grants.getGrant({ grantId: `grt_${i}` }, { timeoutMs: 5_000 }).then(
        () => undefined,
        () => (refused += 1),
      );
    }
  };
  await Promise.all(Array.from({ length: 64 }, (_, n) => caller(n)));
  clearInterval(report);
  for (const clients of channels) clients.close();
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

/** RSS after a full garbage collection in the server (SIGUSR2, `bench/abuse-gc.ts`). */
async function collectedMemory(server: ChildProcess): Promise<{ rssMb: number; peakMb: number }> {
  server.kill("SIGUSR2");
  await sleep(500);
  return memory(server.pid as number);
}

interface Latency {
  readonly p50: number;
  readonly p99: number;
  readonly failed: number;
}

/** One phase's row of docs/perf/abuse.md. */
function phaseRow(
  phase: string,
  baseline: Latency,
  loaded: Latency,
  rss: Record<"before" | "during" | "after", { rssMb: number }>,
): string[] {
  const x = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  return [
    phase === "all" ? `all (${ALL_ATTACKS})` : phase,
    `${loaded.p50.toFixed(2)}/${loaded.p99.toFixed(2)}`,
    x(loaded.p99, baseline.p99),
    String(loaded.failed),
    `${rss.before.rssMb}/${rss.during.rssMb}/${rss.after.rssMb}`,
    x(rss.during.rssMb, rss.before.rssMb),
    x(rss.after.rssMb, rss.before.rssMb),
  ];
}

/** Writes docs/perf/abuse.md: the phases' rows beside the baseline of the same run. */
function reportAbuse(limits: object, baseline: Latency, rows: string[][]): void {
  const path = writePerfReport(ROOT, {
    name: "abuse",
    title: "bench:abuse — a normal client beside abusive ones",
    command: benchCommand("bench:abuse", [
      "BENCH_CALLS",
      "BENCH_PHASES",
      "BENCH_WATCHERS",
      "BENCH_ABUSE_SECONDS",
    ]),
    settings: [
      ...shortRunNote(NORMAL_CALLS < 1000),
      `one server process (workers 1), limits ${JSON.stringify(limits)}; ${NORMAL_CALLS} sequential Authorize calls per measurement; the abuser is another process on the same cores`,
      `baseline (normal client alone, same run): p50/p99 ${baseline.p50.toFixed(2)}/${baseline.p99.toFixed(2)} ms, ${baseline.failed} failed`,
    ],
    table: [
      [
        "phase",
        "normal p50/p99 ms",
        "p99 ratio (goal 3x)",
        "answers lost (goal 0)",
        "RSS MB baseline/after attack/after leave",
        "RSS after attack ratio",
        "RSS after leave ratio (goal 1.10x)",
      ],
      ...rows,
    ],
    notes: [
      "**p99 ratio**: the normal client's p99 beside the phase's attacks over its p99 alone, measured first in the same run. **answers lost**: its calls that failed. **RSS**: the server's VmRSS after a forced full garbage collection, before the phase (baseline), while the attack ran (after attack, no collection forced), and 6 s after the abuser left (after leave).",
      "Read the ratios, not the absolute figures: they depend on the machine and on what else ran on it.",
    ],
  });
  if (path !== undefined) console.log(`wrote ${path}`);
}

/**
 * One client delegating a grant whose caveat on `email.draft` is `^(a+)+$` (exponential on a
 * backtracking engine), then sending Authorize calls whose body is 40 `a` and a `!` in a loop.
 */
async function patternAttack(port: number, grantToken: string, until: number): Promise<void> {
  const clients = createCharterClients({ address: `127.0.0.1:${port}` });
  try {
    const delegate = () =>
      clients.grants
        .delegateGrant({
          parentToken: grantToken,
          subject: "agent:abuser-child",
          allowed: ["email.draft"],
          caveats: {
            "email.draft": create(ActionCaveatsSchema, {
              constraintsJson: [
                JSON.stringify({ properties: { body: { type: "string", pattern: "^(a+)+$" } } }),
              ],
            }),
          },
        })
        .then((r) => r.grantToken)
        .catch(() => undefined);
    // Beside the lockout attack, this client's own connection may be closed before its first call.
    let childToken = await delegate();
    while (childToken === undefined && Date.now() < until) childToken = await delegate();
    const body = `${"a".repeat(40)}!`;
    for (let i = 0; Date.now() < until; i++) {
      await clients.authority
        .authorize(
          {
            grantToken: childToken ?? "",
            call: {
              callId: `p${i}`,
              toolName: "draft_email",
              argumentsJson: JSON.stringify({ subject: "s", body }),
            },
          },
          { timeoutMs: 5_000 },
        )
        .catch(() => undefined);
    }
  } finally {
    clients.close();
  }
}
