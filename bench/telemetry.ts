/**
 * What metrics cost on the hot path: Authorize through the application layer (`src/authority`,
 * the real SQLite store with group commit, durable before the answer) with the Prometheus
 * recorder installed against the same run without it, in interleaved rounds; then the
 * instruments alone (a decision, a store timing) per call. Prints medians and the spread of the
 * per-round ratios (this machine is shared and noisy: read the ratios, not the times).
 *
 *   npm run bench:telemetry        (BENCH_ROUNDS, BENCH_CALLS to change the size)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createAppContext } from "../src/app/context.js";
import { authorize, issueGrant } from "../src/authority/index.js";
import { DEFAULTS } from "../src/config/config.js";
import {
  installInstruments,
  recordDecision,
  recordStoreSince,
  startTimer,
} from "../src/telemetry/index.js";
import { createMetrics } from "../src/telemetry/metrics.js";
import { unbudgetedPolicy } from "../test/support/unbudgeted-policy.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 10);
const CALLS = Number(process.env["BENCH_CALLS"] ?? 3000);
const IN_FLIGHT = 32;

const median = (xs: readonly number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "charter-bench-telemetry-"));
  // Thousands of calls under one grant: the demo policy without owner-assistant's call budget.
  const policy = unbudgetedPolicy(join(ROOT, "fixtures"));
  const ctx = await createAppContext({
    ...DEFAULTS,
    dataDir,
    catalog: join(ROOT, "fixtures", "catalog.yaml"),
    policy: policy.policy,
  });
  const metrics = createMetrics();
  try {
    const { token } = await issueGrant(ctx, {
      profile: "owner-assistant",
      subject: "agent:bench",
      owner: "ana@example.com",
      purpose: "bench",
    });
    let n = 0;
    /** Calls per second and CPU µs per call of CALLS Authorize calls, IN_FLIGHT at a time (so group commits share their flush). */
    const round = async (): Promise<{ rate: number; cpu: number }> => {
      const started = performance.now();
      const cpu = process.cpuUsage();
      let next = 0;
      const lane = async () => {
        while (next < CALLS) {
          next += 1;
          const call = {
            callId: `c${n++}`,
            toolName: "web_search",
            actionId: "",
            argumentsJson: '{"query":"q"}',
          };
          const { verdict } = await authorize(ctx, { grantToken: token, call });
          if (verdict.decision !== "allow")
            throw new Error(`expected allow, got ${verdict.decision}`);
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
      const used = process.cpuUsage(cpu);
      return {
        rate: CALLS / ((performance.now() - started) / 1000),
        cpu: (used.user + used.system) / CALLS,
      };
    };
    await round(); // warm-up
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    const off: { rate: number; cpu: number }[] = [];
    const on: { rate: number; cpu: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate which goes first, so a drift in the machine's load does not favour one side.
      let without: { rate: number; cpu: number } | undefined;
      let withMetrics: { rate: number; cpu: number } | undefined;
      for (const metricsOn of r % 2 === 0 ? [false, true] : [true, false]) {
        installInstruments(metricsOn ? metrics.instruments : undefined);
        if (metricsOn) withMetrics = await round();
        else without = await round();
      }
      if (!without || !withMetrics) throw new Error("a round is missing");
      off.push(without);
      on.push(withMetrics);
      ratios.push(withMetrics.rate / without.rate);
      cpuRatios.push(withMetrics.cpu / without.cpu);
    }
    installInstruments(undefined);
    const spread = (xs: readonly number[]) =>
      `median ${median(xs).toFixed(3)}, per-round ${Math.min(...xs).toFixed(3)}..${Math.max(...xs).toFixed(3)}`;
    console.log(
      `Authorize (application layer, SQLite, ${IN_FLIGHT} in flight, ${CALLS} calls x ${ROUNDS} interleaved rounds)`,
    );
    console.log(
      `  metrics off: ${median(off.map((x) => x.rate)).toFixed(0)} calls/s, ${median(off.map((x) => x.cpu)).toFixed(1)} µs CPU/call`,
    );
    console.log(
      `  metrics on:  ${median(on.map((x) => x.rate)).toFixed(0)} calls/s, ${median(on.map((x) => x.cpu)).toFixed(1)} µs CPU/call (medians)`,
    );
    console.log(`  on/off throughput ratio: ${spread(ratios)}`);
    console.log(`  on/off CPU-per-call ratio: ${spread(cpuRatios)}`);

    // The instruments alone, as Authorize calls them per decision (one decision, two store timings).
    const perCall = (): number => {
      const k = 200_000;
      const started = performance.now();
      for (let i = 0; i < k; i++) {
        recordDecision(i % 3 === 0 ? "deny" : "allow", i % 3 === 0 ? "EXPLICIT_DENY" : undefined);
        recordStoreSince("commitDecision", startTimer());
        recordStoreSince("anyRevoked", startTimer());
      }
      return ((performance.now() - started) * 1e6) / k;
    };
    const nsOff: number[] = [];
    const nsOn: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      installInstruments(undefined);
      nsOff.push(perCall());
      installInstruments(metrics.instruments);
      nsOn.push(perCall());
    }
    installInstruments(undefined);
    console.log(
      `Instruments per Authorize call (a decision and two store timings): off ${median(nsOff).toFixed(0)} ns, on ${median(nsOn).toFixed(0)} ns (medians of ${ROUNDS})`,
    );
  } finally {
    await ctx.close();
    policy.remove();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
