/**
 * `charter replay` throughput on one core, against live decide measured in the same run: a log of
 * DECISIONS decisions is recorded through Authorize on the embedded SQLite store (inputs retained,
 * a new grant every 50 calls, a mix of allows, approvals and denies), then replayed under the live
 * policy itself (every decision read from the audit log, its inputs opened, its grant made again,
 * decided again) and, as the baseline, the same calls decided by `assessInForce` alone (the pure
 * decide, nothing read). Rounds are interleaved and the figures are medians over rounds, with
 * their spread; the target is at least 100,000 replayed decisions per second.
 *
 *   npm run bench:replay      (BENCH_ROUNDS=7, BENCH_DECISIONS=20000; BENCH_KEK=1 seals the inputs)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createAppContext } from "../src/app/context.js";
import { authorize, issueGrant, replayDecisions } from "../src/authority/index.js";
import { DEFAULTS } from "../src/config/config.js";
import { assessInForce } from "../src/core/withdraw.js";
import type { TaskGrant } from "../src/core/grant.js";
import { interleave, median, spread } from "./rounds.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 7);
const DECISIONS = Number(process.env["BENCH_DECISIONS"] ?? 20_000);
const PER_GRANT = 50;

const dir = mkdtempSync(join(tmpdir(), "charter-bench-replay-"));
const ctx = await createAppContext({
  ...DEFAULTS,
  dataDir: join(dir, "data"),
  catalog: join(ROOT, "fixtures", "catalog.yaml"),
  policy: join(ROOT, "fixtures", "policy.yaml"),
  retainDecisionInputsDays: 30,
  createStore: "if-missing",
  ...(process.env["BENCH_KEK"] === "1" ? { kek: Buffer.alloc(32, 9).toString("base64") } : {}),
});

const refund = (amount: number) =>
  JSON.stringify({ order_id: "ord_A1B2C3", amount, currency: "EUR", reason: "damaged" });
const CALLS = [
  { toolName: "issue_refund", argumentsJson: refund(40) },
  { toolName: "issue_refund", argumentsJson: refund(250) },
  { toolName: "run_shell", argumentsJson: '{"command":"ls"}' },
  { toolName: "web_search", argumentsJson: '{"query":"charter"}' },
  { toolName: "send_email", argumentsJson: '{"to":"bob@example.com","subject":"Hi","body":"x"}' },
];

// Record the log.
const grants: TaskGrant[] = [];
let token = "";
for (let i = 0; i < DECISIONS; i++) {
  if (i % PER_GRANT === 0) {
    const issued = await issueGrant(ctx, {
      profile: "owner-assistant",
      subject: `agent:bench-${i}`,
      owner: "ana@example.com",
      purpose: "bench",
    });
    token = issued.token;
    grants.push(issued.grant);
  }
  const call = CALLS[i % CALLS.length] as (typeof CALLS)[number];
  await authorize(ctx, { grantToken: token, call: { callId: `c${i}`, actionId: "", ...call } });
}

const set = ctx.policySet();
const parsed = CALLS.map((c) => ({
  callId: "c",
  toolName: c.toolName,
  arguments: JSON.parse(c.argumentsJson) as unknown,
}));

/** Decisions per second of one full replay of the log. */
async function replayRate(): Promise<number> {
  const start = performance.now();
  const report = await replayDecisions(ctx, { candidate: set });
  const seconds = (performance.now() - start) / 1000;
  if (report.replayed + report.notReplayable.count !== DECISIONS)
    throw new Error(`replayed ${report.replayed + report.notReplayable.count} of ${DECISIONS}`);
  if (report.flips.length > 0) throw new Error("a replay under the live policy flipped");
  return DECISIONS / seconds;
}

/** Decisions per second of the pure decide alone, over the same calls and grants. */
function assessRate(): number {
  const now = Math.floor(Date.now() / 1000);
  const start = performance.now();
  for (let i = 0; i < DECISIONS; i++) {
    const grant = grants[Math.floor(i / PER_GRANT)] as TaskGrant;
    assessInForce(grant, set.catalog, set.policy, parsed[i % parsed.length] as never, { now });
  }
  return DECISIONS / ((performance.now() - start) / 1000);
}

await replayRate(); // warm up
assessRate();
const rates = await interleave(ROUNDS, { replay: replayRate, "live assess": assessRate });
const replay = median(rates.replay);
const assess = median(rates["live assess"]);
console.log(
  `bench:replay  ${DECISIONS} decisions, ${ROUNDS} rounds${process.env["BENCH_KEK"] === "1" ? ", inputs sealed" : ""}`,
);
console.log(
  `  replay       ${Math.round(replay).toLocaleString("en")} decisions/s (spread ${(spread(rates.replay) * 100).toFixed(0)} %)`,
);
console.log(
  `  live assess  ${Math.round(assess).toLocaleString("en")} decisions/s (spread ${(spread(rates["live assess"]) * 100).toFixed(0)} %)`,
);
console.log(
  `  replay / live assess: ${(replay / assess).toFixed(3)}; target 100,000/s ${replay >= 100_000 ? "met" : "NOT met"}`,
);
await ctx.close();
rmSync(dir, { recursive: true, force: true });
