/**
 * Charter's gRPC serving path against an empty grpc-js handler, in the same run, driven by h2load
 * with the same pre-framed request bytes (`npm run bench:grpc`; h2load is installed by
 * scripts/provision-h2load.sh when missing).
 *
 *   npm run bench:grpc [-- --workers N] [-- --catalog generated] [-- --vs DIR]
 *
 * Charter is a real `charter serve` process from dist/ with the demo catalog and policy (the
 * owner-assistant budget raised out of reach, so an allow stays an allow for the whole run; the
 * charge is still made) and the default durability (SQLite, WAL, group commit: each group fdatasynced before it answers).
 * `--catalog generated` serves a generated 1,000-action catalog with 500 granted instead. The
 * baseline answers each method path with the bytes Charter answered a sampled request with.
 * For the Authorize scenarios a third server, the floor (bench/grpc-floor.ts), answers the same
 * bytes after doing only what durability and receipts cost — one durable row per call (group
 * commit, one fdatasync per group) and one Ed25519 signature per allow — so the table shows how
 * much of the gap to the empty handler is the durable record and the signature, and how much is
 * Charter's own work. Scenarios and shapes run in interleaved rounds (the servers' order rotating);
 * ratios are medians over the rounds, printed with their spread. Every answer is checked: a
 * sampled request through a grpc-js client before and after each round (grpc-status and verdict),
 * h2load's HTTP status counts, and the statuses Charter logged for the whole run.
 *
 * `--vs DIR` also serves another build of Charter (DIR holds its built `dist/`: a checkout of
 * another commit after `npm run build`) in the same rounds, on its own data dir and with its own
 * grant token (a token is only valid on the server that issued it), and adds its req/s and this
 * build's throughput over it: an A/B of two builds on the same noisy machine.
 *
 * Environment: BENCH_ROUNDS (3), BENCH_SECONDS (3), BENCH_ONLY (comma-separated scenario names),
 * BENCH_SHAPES ("4x32,1x1": connections x streams), BENCH_NODE_ARGS (node flags for the Charter
 * process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it under load).
 */
import { spawn, type ChildProcess } from "node:child_process";
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeGeneratedCatalog } from "./grpc-catalog.js";
import { h2load, median, WARM_UP_SECONDS, type H2loadResult, type Shape } from "./grpc-h2load.js";
import type { FloorWork } from "./grpc-floor.js";
import { rawClient } from "../test/support/raw-grpc.js";
import { scenarios, type Scenario } from "./grpc-scenarios.js";
import { benchCommand, shortRunNote, writePerfReport } from "./perf-report.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 3);
const SECONDS = Number(process.env["BENCH_SECONDS"] ?? 3);
const ONLY = process.env["BENCH_ONLY"]?.split(",");
const SHAPES: Shape[] = (process.env["BENCH_SHAPES"] ?? "4x32,1x1").split(",").map((s) => {
  const [c, m] = s.split("x").map(Number);
  return { connections: c ?? 1, streams: m ?? 1 };
});

const argv = process.argv.slice(2);
const flag = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const WORKERS = Number(flag("--workers") ?? 1);
const CATALOG = flag("--catalog") ?? "demo";
const VS = flag("--vs");
/** The environment variables that change what a run measures, named in its report's command. */
const REPORTED_ENV = ["BENCH_ROUNDS", "BENCH_SECONDS", "BENCH_ONLY", "BENCH_SHAPES"];
/** Linux's USER_HZ, the unit of CPU times in /proc/<pid>/stat. */
const CLOCK_TICKS = 100;

await main();

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "charter-bench-grpc-"));
  const children: ChildProcess[] = [];
  try {
    const documents =
      CATALOG === "generated" ? writeGeneratedCatalog(dir, 1000, 500) : demoDocuments(dir);
    const started = await startCharter(ROOT, join(dir, "charter"), documents, children);
    if (started === undefined) return;
    const { child: charter, address: charterAddress, log: charterLog } = started;
    const caller = rawClient(charterAddress);
    const all = await scenarios(charterAddress, CATALOG === "generated" ? "generated" : "demo");
    const unknown = ONLY?.filter((name) => !all.some((s) => s.name === name)) ?? [];
    if (unknown.length > 0)
      throw new Error(
        `BENCH_ONLY names no scenario: ${unknown.join(", ")} (the scenarios: ${all.map((s) => s.name).join(", ")})`,
      );
    const list = all.filter((s) => !ONLY || ONLY.includes(s.name));
    // Another build, when asked for: its own server, data dir and grant token, the same scenarios by name.
    const other =
      VS === undefined
        ? undefined
        : await startCharter(VS, join(dir, "other"), documents, children);
    if (VS !== undefined && other === undefined) return;
    const otherCaller = other && rawClient(other.address);
    const otherList =
      other &&
      new Map(
        (await scenarios(other.address, CATALOG === "generated" ? "generated" : "demo")).map(
          (s) => [s.name, s],
        ),
      );
    for (const s of list)
      if (otherCaller && otherList)
        await checked(
          otherCaller,
          otherList.get(s.name) as Scenario,
          "before the run (other build)",
        );
    const responses: Record<string, string> = {};
    const floorWork: Record<number, FloorWork> = {};
    for (const s of list) {
      const answer = await checked(caller, s, "before the run");
      responses[s.path] ??= Buffer.from(answer).toString("base64");
      if (s.floor === undefined) continue;
      if (floorWork[s.message.length] !== undefined)
        throw new Error(
          `${s.name}: another floored request has its length (${s.message.length} bytes)`,
        );
      floorWork[s.message.length] = {
        rows: s.floor.rows,
        signs: s.floor.signs,
        signedBytes: s.floor.signedBytes(answer),
      };
    }
    const responsesFile = join(dir, "responses.json");
    writeFileSync(responsesFile, JSON.stringify(responses));
    const floorFile = join(dir, "floor.json");
    writeFileSync(floorFile, JSON.stringify(floorWork));
    const baselinePort = await freePort();
    const baseline = spawnLogged(
      process.execPath,
      [
        join(ROOT, "dist-bench/bench/grpc-baseline.js"),
        String(baselinePort),
        String(WORKERS),
        responsesFile,
      ],
      join(dir, "baseline.log"),
    );
    children.push(baseline);
    if (!(await ready(`127.0.0.1:${baselinePort}`, baseline, list[0])))
      throw new Error("the baseline server did not start");
    const floorPort = await freePort();
    const floor = spawnLogged(
      process.execPath,
      [
        join(ROOT, "dist-bench/bench/grpc-floor.js"),
        String(floorPort),
        String(WORKERS),
        responsesFile,
        floorFile,
        join(dir, "floor"),
      ],
      join(dir, "floor.log"),
    );
    children.push(floor);
    if (!(await ready(`127.0.0.1:${floorPort}`, floor, list[0])))
      throw new Error("the floor server did not start");

    console.log(
      `bench:grpc  catalog ${CATALOG}, workers ${WORKERS}, ${ROUNDS} rounds of ${SECONDS} s per server, h2load -t1 (both servers and h2load share this machine's cores)`,
    );
    const rows: string[][] = [
      [
        "scenario",
        "shape",
        "charter req/s",
        "baseline req/s",
        "throughput ratio (spread)",
        "p50 ratio",
        "p99 ratio",
        "charter p50/p99 ms",
        "server CPU µs/req charter/baseline",
        "floor req/s",
        "charter/floor (spread)",
        "floor p50/p99 ms",
        "floor CPU µs/req",
        ...(other ? ["other build req/s", "this/other build (spread)"] : []),
      ],
    ];
    for (const shape of SHAPES) {
      for (const s of list) {
        const charterRuns: Measured[] = [];
        const baselineRuns: Measured[] = [];
        const floorRuns: Measured[] = [];
        const otherRuns: Measured[] = [];
        const os = otherList?.get(s.name);
        for (let round = 0; round < ROUNDS; round++) {
          const runs = [
            async () =>
              charterRuns.push(
                await measured(charter, `http://${charterAddress}${s.path}`, s, shape, dir),
              ),
            async () =>
              baselineRuns.push(
                await measured(
                  baseline,
                  `http://127.0.0.1:${baselinePort}${s.path}`,
                  s,
                  shape,
                  dir,
                ),
              ),
            ...(s.floor
              ? [
                  async () =>
                    floorRuns.push(
                      await measured(
                        floor,
                        `http://127.0.0.1:${floorPort}${s.path}`,
                        s,
                        shape,
                        dir,
                      ),
                    ),
                ]
              : []),
            ...(other && os
              ? [
                  async () =>
                    otherRuns.push(
                      await measured(
                        other.child,
                        `http://${other.address}${os.path}`,
                        os,
                        shape,
                        dir,
                      ),
                    ),
                ]
              : []),
          ];
          // The order rotates each round, so no server always runs first (or right after another).
          for (let k = 0; k < runs.length; k++)
            await (runs[(round + k) % runs.length] as () => Promise<number>)();
          await checked(caller, s, `after round ${round + 1}`);
          if (otherCaller && os)
            await checked(otherCaller, os, `after round ${round + 1} (other build)`);
        }
        const failed = [...charterRuns, ...baselineRuns, ...floorRuns, ...otherRuns].reduce(
          (n, r) => n + r.failed,
          0,
        );
        if (failed > 0)
          throw new Error(
            `${s.name} at ${JSON.stringify(shape)}: ${failed} requests failed or answered other than HTTP 2xx`,
          );
        const ratios = charterRuns.map((r, i) => r.rps / (baselineRuns[i] as Measured).rps);
        const m = (runs: Measured[], key: "rps" | "p50" | "p99" | "cpuMicros") =>
          median(runs.map((r) => r[key]));
        rows.push([
          s.name,
          `-c${shape.connections} -m${shape.streams}`,
          m(charterRuns, "rps").toFixed(0),
          m(baselineRuns, "rps").toFixed(0),
          `${median(ratios).toFixed(2)}x (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
          `${(m(charterRuns, "p50") / m(baselineRuns, "p50")).toFixed(2)}x`,
          `${(m(charterRuns, "p99") / m(baselineRuns, "p99")).toFixed(2)}x`,
          `${m(charterRuns, "p50").toFixed(2)}/${m(charterRuns, "p99").toFixed(2)}`,
          `${m(charterRuns, "cpuMicros").toFixed(0)}/${m(baselineRuns, "cpuMicros").toFixed(0)}`,
          ...floorColumns(charterRuns, floorRuns),
          ...(other ? versusColumns(charterRuns, otherRuns) : []),
        ]);
        console.log(rows.at(-1)?.join("  "));
      }
    }
    caller.close();
    otherCaller?.close();
    printTable(rows);
    console.log(
      `statuses Charter logged over the run: ${JSON.stringify(loggedStatuses(charterLog))}`,
    );
    console.log(
      "throughput ratio: Charter req/s over the empty handler's (higher is better; BatchAuthorize counts RPCs of 16 calls); p50/p99 ratio: Charter's latency over the empty handler's (lower is better)",
    );
    console.log(
      "floor: a grpc-js handler that only makes each call's record durable (one row per call, group commit, one fdatasync per group) and signs each allow with Ed25519 (bench/grpc-floor.ts); charter/floor: Charter's req/s over the floor's",
    );
    if (other)
      console.log(
        `other build: ${VS ?? ""} (its own server, data dir and grant token); this/other build: this build's req/s over the other's, per round`,
      );
    const written = writePerfReport(ROOT, {
      name: reportName(),
      title: "bench:grpc — the gRPC serving path against an empty handler and a floor",
      command: benchCommand("bench:grpc", REPORTED_ENV).replace(/--vs \S+/, "--vs DIR"),
      settings: [
        ...shortRunNote(ROUNDS < 3 || SECONDS < 3),
        `catalog ${CATALOG}, workers ${WORKERS}, ${ROUNDS} rounds of ${SECONDS} s per server and scenario, h2load -t1; the servers and h2load share the machine's cores`,
        `statuses Charter logged over the run: ${JSON.stringify(loggedStatuses(charterLog))}`,
      ],
      table: rows,
      notes: [
        "**throughput ratio**: Charter's req/s over the empty handler's, median over the rounds with the spread (higher is better; BatchAuthorize counts RPCs of 16 calls). **p50/p99 ratio**: Charter's latency over the empty handler's (lower is better). **server CPU**: each server's CPU time per request.",
        "**floor**: a grpc-js handler that only makes each call's record durable (one row per call, group commit, one fdatasync per group) and signs each allow with Ed25519 (bench/grpc-floor.ts); **charter/floor**: Charter's req/s over the floor's.",
        ...(other
          ? [
              "**other build**: another build of Charter served in the same rounds (its own server, data dir and grant token); **this/other build**: this build's req/s over the other's, per round.",
            ]
          : []),
        "Read the ratios and their spread, not the absolute figures: they depend on the machine and on what else ran on it.",
      ],
    });
    if (written !== undefined) console.log(`wrote ${written}`);
  } finally {
    for (const child of children) child.kill("SIGTERM");
    await Promise.all(
      children.map((c) =>
        c.exitCode === null ? new Promise((r) => c.once("exit", r)) : Promise.resolve(),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Measured extends H2loadResult {
  /** The server's CPU time (its process and its workers) per request, warm-up included (at the measured rate). */
  readonly cpuMicros: number;
}

/** One h2load run against a server, with the CPU time the server spent. */
async function measured(
  server: ChildProcess,
  url: string,
  s: Scenario,
  shape: Shape,
  dir: string,
): Promise<Measured> {
  const before = cpuSeconds(server.pid as number);
  const result = await h2load(url, s.frame, shape, SECONDS, dir);
  const spent = cpuSeconds(server.pid as number) - before;
  return { ...result, cpuMicros: (spent * 1e6) / (result.rps * (SECONDS + WARM_UP_SECONDS)) };
}

/** The other build's columns: its req/s and this build's throughput over it (median and spread). */
function versusColumns(charterRuns: readonly Measured[], otherRuns: readonly Measured[]): string[] {
  const ratios = charterRuns.map((r, i) => r.rps / (otherRuns[i] as Measured).rps);
  return [
    median(otherRuns.map((r) => r.rps)).toFixed(0),
    `${median(ratios).toFixed(2)}x (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
  ];
}

/**
 * A `charter serve` process of the build under `root` (its `dist/cli/bin.js`) on a free port, with
 * its config and data under `home`; undefined (and a message) when this build does not accept
 * `--workers N` yet.
 */
async function startCharter(
  root: string,
  home: string,
  documents: { catalog: string; policy: string },
  children: ChildProcess[],
): Promise<{ child: ChildProcess; address: string; log: string } | undefined> {
  mkdirSync(home, { recursive: true });
  const port = await freePort();
  const configFile = join(home, "charter.json");
  writeFileSync(
    configFile,
    JSON.stringify({ listen: `127.0.0.1:${port}`, dataDir: join(home, "data"), ...documents }),
  );
  const log = join(home, "charter.log");
  // Always explicit: without the flag `charter serve` runs one worker per core.
  const serveArgs = ["serve", "--config", configFile, "--workers", String(WORKERS)];
  const nodeArgs = process.env["BENCH_NODE_ARGS"]?.split(" ").filter((a) => a !== "") ?? [];
  const child = spawnLogged(
    process.execPath,
    [...nodeArgs, join(root, "dist/cli/bin.js"), ...serveArgs],
    log,
  );
  children.push(child);
  const address = `127.0.0.1:${port}`;
  if (await ready(address, child)) return { child, address, log };
  const text = readFileSync(log, "utf8");
  if (WORKERS > 1 && /workers/i.test(text)) {
    console.log(
      `skipped: the charter serve of ${root} does not accept --workers ${WORKERS} yet (it said: ${text.trim().split("\n")[0] ?? ""})`,
    );
    return undefined;
  }
  throw new Error(`charter serve (${root}) did not start:\n${text}`);
}

/**
 * The floor's columns: its req/s, Charter's throughput over it (median and spread), its latency
 * and its CPU per request (what durability and receipts alone cost the server); dashes where a
 * scenario has no floor.
 */
function floorColumns(charterRuns: readonly Measured[], floorRuns: readonly Measured[]): string[] {
  if (floorRuns.length === 0) return ["-", "-", "-", "-"];
  const ratios = charterRuns.map((r, i) => r.rps / (floorRuns[i] as Measured).rps);
  return [
    median(floorRuns.map((r) => r.rps)).toFixed(0),
    `${median(ratios).toFixed(2)}x (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
    `${median(floorRuns.map((r) => r.p50)).toFixed(2)}/${median(floorRuns.map((r) => r.p99)).toFixed(2)}`,
    median(floorRuns.map((r) => r.cpuMicros)).toFixed(0),
  ];
}

/** User + system CPU seconds of a process and its direct children (cluster workers), from /proc. */
function cpuSeconds(pid: number): number {
  const ticks = (p: string) => {
    const fields = readFileSync(`/proc/${p}/stat`, "utf8")
      .replace(/^.*\) /, "")
      .split(" ");
    return { ppid: Number(fields[1]), cpu: Number(fields[11]) + Number(fields[12]) };
  };
  let total = ticks(String(pid)).cpu;
  for (const p of readdirSync("/proc").filter((d) => /^\d+$/.test(d) && d !== String(pid))) {
    try {
      const t = ticks(p);
      if (t.ppid === pid) total += t.cpu;
    } catch {
      // gone meanwhile
    }
  }
  return total / CLOCK_TICKS;
}

/** The demo catalog and policy, owner-assistant's budget raised out of reach (the charge still runs). */
function demoDocuments(dir: string): { catalog: string; policy: string } {
  const text = readFileSync(join(ROOT, "fixtures/policy.yaml"), "utf8");
  const raised = text
    .replace("      maxCalls: 300\n", "      maxCalls: 1000000000\n")
    .replace("      maxCallsPerAction: 60\n", "      maxCallsPerAction: 1000000000\n");
  if (raised === text)
    throw new Error("fixtures/policy.yaml: owner-assistant's budget lines not found");
  const policy = join(dir, "policy.yaml");
  writeFileSync(policy, raised);
  return { catalog: join(ROOT, "fixtures/catalog.yaml"), policy };
}

/** Sends the scenario's request through a grpc-js client and checks status and answer; returns the response bytes. */
async function checked(
  caller: ReturnType<typeof rawClient>,
  s: Scenario,
  when: string,
): Promise<Uint8Array> {
  const out = await caller.call(s.path, s.message);
  if (!out.ok) throw new Error(`${s.name} ${when}: grpc-status ${out.code} ${out.details}`);
  const problem = s.expect(out.bytes);
  if (problem) throw new Error(`${s.name} ${when}: ${problem}`);
  return out.bytes;
}

/** Counts of `rpc` log lines by method and status. */
function loggedStatuses(file: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = /"method":"\/charter\.v1\.\w+\/(\w+)","status":"(\w+)"/.exec(line);
    if (m) {
      const key = `${m[1] ?? ""} ${m[2] ?? ""}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
  }
  return counts;
}

function spawnLogged(command: string, args: string[], logFile: string): ChildProcess {
  const fd = openSync(logFile, "w");
  // The quick start's choices (protected mode on loopback, a store made on first start), as
  // environment variables: a baseline checkout from before these settings ignores them.
  const env = { ...process.env, CHARTER_AUTH: "none", CHARTER_CREATE_STORE: "if-missing" };
  const child = spawn(command, args, { stdio: ["ignore", fd, fd], env });
  closeSync(fd);
  return child;
}

/** Polls until the server answers (GetJwks, or the scenario given for the baseline), or it exits. */
async function ready(address: string, child: ChildProcess, probe?: Scenario): Promise<boolean> {
  const caller = rawClient(address);
  try {
    for (let i = 0; i < 200 && child.exitCode === null; i++) {
      const out = await caller.call(
        probe?.path ?? "/charter.v1.KeyService/GetJwks",
        probe?.message ?? new Uint8Array(),
        500,
      );
      if (out.ok) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  } finally {
    caller.close();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** docs/perf/grpc.md for the default run; a run with other options gets a file of its own. */
function reportName(): string {
  const parts = [
    "grpc",
    ...(CATALOG === "demo" ? [] : [CATALOG]),
    ...(WORKERS === 1 ? [] : [`workers-${WORKERS}`]),
    ...(VS === undefined ? [] : ["vs"]),
  ];
  return parts.join("-");
}

function printTable(rows: string[][]): void {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  console.log("");
  for (const r of rows) console.log(r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  "));
}
