/**
 * The pure decision against two authorization engines on an equivalent policy
 * (`decide-scenario.ts`), interleaved rounds, medians; this machine is shared, so read the ratios
 * and the spread it prints.
 *
 *   npm run bench:decide        (installs bench/compare's engines on first use; BENCH_ROUNDS, BENCH_CALLS)
 *
 * Each engine runs in a child process of its own (V8 on Node 20 aborted in its deoptimizer with
 * the three JIT-compiled in one process), driven in turn by this one, round by round: one round
 * runs every contender once, in alternating order. Cedar (@cedar-policy/cedar-wasm 4, stateful:
 * schema and policy set preparsed once, then `statefulIsAuthorized` with request validation);
 * casbin (`enforceSync`, an ABAC matcher). Every engine is checked against the expected answers
 * before it is timed.
 *
 * Charter's figures: `assess()` is the decision as Authorize's decide step makes it (every check;
 * the call digest is computed afterwards, once, for the record and the receipt); `decide()` is the
 * same with the call digest computed inside (node's sha256, as the server passes); the digest
 * alone, and ajv's check of the same arguments as the floor.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { charterContenders } from "./decide-charter.js";
import { casbinContenders, cedarContenders } from "./decide-rivals.js";
import type { Contender } from "./decide-scenario.js";
import { benchCommand, shortRunNote, writePerfReport } from "./perf-report.js";
import { fmt, interleave, median, spread } from "./rounds.js";

const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 11);
const CALLS = Number(process.env["BENCH_CALLS"] ?? 20_000);
const ENGINES = {
  charter: charterContenders,
  cedar: cedarContenders,
  casbin: casbinContenders,
} as const;
type Engine = keyof typeof ENGINES;
/** Calls per run, as a fraction of BENCH_CALLS: the slower engines run fewer, for rounds of similar length. */
const SHARE: Record<Engine, number> = { charter: 1, cedar: 0.05, casbin: 0.25 };

interface Ask {
  readonly name: string;
}
interface Answer {
  readonly names?: readonly string[];
  readonly ns?: number;
}

const engineArg = process.argv.indexOf("--engine");
if (engineArg >= 0) await serveEngine(process.argv[engineArg + 1] as Engine);
else await main();

/** In a child: build one engine's contenders, warm them up, then time the one asked for, each time asked. */
async function serveEngine(engine: Engine): Promise<void> {
  const contenders: Record<string, Contender> = await ENGINES[engine]();
  const calls = Math.max(100, Math.round(CALLS * SHARE[engine]));
  for (const run of Object.values(contenders)) run(calls);
  process.on("message", (ask: Ask) =>
    process.send?.({ ns: (contenders[ask.name] as Contender)(calls) } satisfies Answer),
  );
  process.send?.({ names: Object.keys(contenders) } satisfies Answer);
}

async function main(): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const children: ChildProcess[] = [];
  try {
    const contenders: Record<string, () => Promise<number>> = {};
    for (const engine of Object.keys(ENGINES) as Engine[]) {
      const child = fork(self, ["--engine", engine], { stdio: "inherit" });
      children.push(child);
      const names = (await reply(child)).names ?? [];
      for (const name of names) {
        contenders[name] = async () => {
          child.send({ name } satisfies Ask);
          return (await reply(child)).ns ?? Number.NaN;
        };
      }
    }
    report(await interleave(ROUNDS, contenders));
  } finally {
    for (const child of children) child.kill();
  }
}

function reply(child: ChildProcess): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) =>
      reject(new Error(`a bench engine exited (code ${code ?? "null"})`));
    child.once("exit", onExit);
    child.once("message", (answer: Answer) => {
      child.off("exit", onExit);
      resolve(answer);
    });
  });
}

function report(ns: Record<string, number[]>): void {
  const lines: string[] = [];
  const say = (line: string) => {
    console.log(line);
    lines.push(line);
  };
  const table: string[][] = [["contender", "µs per call", "calls/s", "spread"]];
  say(
    `decide() against Cedar and casbin: median per call over ${ROUNDS} interleaved rounds (spread = (max-min)/median over rounds)`,
  );
  for (const [name, values] of Object.entries(ns)) {
    const m = median(values);
    const cells = [name, fmt(m / 1000), fmt(1e9 / m), `${fmt(spread(values) * 100)}%`];
    table.push(cells);
    console.log(
      `  ${name.padEnd(38)} ${(cells[1] as string).padStart(7)} µs  ${(cells[2] as string).padStart(9)} /s  spread ${cells[3] as string}`,
    );
  }
  const of = (name: string) => ns[name] ?? [];
  /** The median of the per-round ratios a/b. */
  const ratio = (a: string, b: string) =>
    median(of(a).map((v, i) => v / (of(b)[i] as number))).toFixed(1);
  say(
    `assess() allow: ${fmt(1e9 / median(of("assess() allow")))} decisions/s on one core (target >= 250,000)`,
  );
  say(
    `  vs Cedar stateful isAuthorized: ${ratio("cedar statefulIsAuthorized allow", "assess() allow")}x (target >= 20x)`,
  );
  say(
    `  vs casbin enforceSync:          ${ratio("casbin enforceSync allow", "assess() allow")}x (target >= 10x)`,
  );
  const withDigest = "decide() allow, digest included";
  say(
    `decide() allow, digest included: ${fmt(1e9 / median(of(withDigest)))} decisions/s; ${ratio("cedar statefulIsAuthorized allow", withDigest)}x Cedar, ${ratio("casbin enforceSync allow", withDigest)}x casbin`,
  );
  say(
    `deny (constraint): ${ratio("cedar statefulIsAuthorized deny", "assess() deny (constraint)")}x Cedar, ${ratio("casbin enforceSync deny", "assess() deny (constraint)")}x casbin`,
  );
  const written = writePerfReport(fileURLToPath(new URL("../..", import.meta.url)), {
    name: "decide",
    title: "bench:decide — the pure decision against Cedar and casbin",
    command: benchCommand("bench:decide", ["BENCH_ROUNDS", "BENCH_CALLS"]),
    settings: [
      ...shortRunNote(ROUNDS < 11 || CALLS < 20_000),
      `${ROUNDS} interleaved rounds; ${CALLS} calls per run for Charter (Cedar ${Math.max(100, Math.round(CALLS * SHARE.cedar))}, casbin ${Math.max(100, Math.round(CALLS * SHARE.casbin))}); each engine in a child process of its own`,
    ],
    table,
    notes: [
      "Figures are medians over the rounds; **spread** is (max − min) / median over the rounds. Ratios are medians of the per-round ratios:",
      lines.slice(1).join("  \n"),
      "`assess()` is the decision as Authorize's decide step makes it (the call digest is computed afterwards, once); `decide()` includes the digest. Cedar: `@cedar-policy/cedar-wasm`, stateful `isAuthorized`; casbin: `enforceSync` with an ABAC matcher, on an equivalent policy (bench/decide-scenario.ts).",
    ],
  });
  if (written !== undefined) console.log(`wrote ${written}`);
}
