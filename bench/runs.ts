/**
 * What a run costs (docs/runs.md), against baselines measured in the same run:
 *
 * - in process, the pure decide (`assess`, as Authorize runs it, and `decide` with the digest) of one allowed call (send_email to an internal address) under
 *   the demo's owner-assistant grant, whose Rule of Two and write rules are evaluated for a run
 *   that has seen `private` (the rules look, and do not hold): p50 and p99 per call, without a run
 *   and with one;
 * - Authorize on the embedded SQLite store, one call at a time (each awaits its commit): the same
 *   call without a step (the baseline), and as a new step of a run (the run's state is read, the
 *   call decided on it, its effect on the run committed with the decision).
 *
 * Rounds are interleaved (the order rotates each round) and the ratios are medians over rounds,
 * with their spread: these machines are shared and noisy, so read the ratios.
 *
 *   npm run bench:runs            (BENCH_ROUNDS=11, BENCH_CALLS=200 per variant and round)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createAppContext } from "../src/app/context.js";
import { authorize, issueGrant, type CallRequest } from "../src/authority/index.js";
import { DEFAULTS } from "../src/config/config.js";
import { assess, callDigests, compose, decide, type ToolCall } from "../src/core/index.js";
import { emptyRun, type RunView } from "../src/core/run.js";
import { nativeSha256Hex } from "../src/authority/sha256.js";
import { loadCatalogFile, loadPolicyFile } from "../src/load/documents.js";
import { interleave, median } from "./rounds.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 11);
const CALLS = Number(process.env["BENCH_CALLS"] ?? 200);
const FIXTURES = join(ROOT, "fixtures");
const SEND = { to: "bo@example.com", subject: "Notes", body: "As promised." };

const quantile = (xs: number[], q: number) =>
  xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] as number;

// ---- in process: decide with and without the run
const catalog = await loadCatalogFile(join(FIXTURES, "catalog.yaml"));
const policyDoc = await loadPolicyFile(join(FIXTURES, "policy.yaml"), catalog);
const now = Math.floor(Date.now() / 1000);
const composed = compose(
  { profile: "owner-assistant", subject: "agent:bench", owner: "ana", purpose: "bench" },
  policyDoc,
  catalog,
  now,
  "grt_bench",
);
if (composed.kind !== "granted") throw new Error("owner-assistant does not compose");
const grant = composed.grant;
const toolCall: ToolCall = { callId: "b", toolName: "send_email", arguments: SEND };
const run: RunView = {
  ...emptyRun("bench"),
  labels: [{ label: "private", actionId: "contact.lookup", toolName: "lookup_contact", call: 1 }],
  calls: 1,
};
// As Authorize's decide step makes it: the call's digests made once beforehand (admitCall), so
// `assess` is the checks alone; `decide` adds the call digest.
const digests = callDigests(SEND, nativeSha256Hex);
const decideVariants: Record<string, () => { decision: string }> = {
  "assess, no run": () => assess(grant, catalog, toolCall, { now, digests }).verdict,
  "assess, in a run": () => assess(grant, catalog, toolCall, { now, digests, run }).verdict,
  "decide, no run": () => decide(grant, catalog, toolCall, { now, hash: nativeSha256Hex }),
  "decide, in a run": () => decide(grant, catalog, toolCall, { now, hash: nativeSha256Hex, run }),
};
for (const [name, fn] of Object.entries(decideVariants)) {
  const v = fn();
  if (v.decision !== "allow") throw new Error(`${name}: ${v.decision}`);
}
const samples = new Map<string, number[]>(Object.keys(decideVariants).map((n) => [n, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, fn] of Object.entries(decideVariants)) {
    const xs = samples.get(name) as number[];
    for (let i = 0; i < 2000; i++) {
      const t = process.hrtime.bigint();
      fn();
      xs.push(Number(process.hrtime.bigint() - t) / 1000);
    }
  }
}
console.log(
  `runs bench: decide in process, ${ROUNDS} rounds of 2000 calls per variant (µs per call)`,
);
for (const [name, xs] of samples)
  console.log(
    `  ${name.padEnd(28)} p50 ${quantile(xs, 0.5).toFixed(1)}  p99 ${quantile(xs, 0.99).toFixed(1)}`,
  );

// ---- Authorize on the embedded store
const dir = mkdtempSync(join(tmpdir(), "charter-bench-runs-"));
// The demo policy without its call budgets: the bench makes thousands of allowed calls.
const policy = join(dir, "policy.yaml");
writeFileSync(
  policy,
  readFileSync(join(FIXTURES, "policy.yaml"), "utf8")
    .replace(/\n\s+maxCalls: 300(?=\n)/, "")
    .replace(/\n\s+maxCallsPerAction: 60(?=\n)/, ""),
);
const ctx = await createAppContext({
  ...DEFAULTS,
  dataDir: join(dir, "data"),
  catalog: join(FIXTURES, "catalog.yaml"),
  policy,
});
const { token } = await issueGrant(ctx, {
  profile: "owner-assistant",
  subject: "agent:bench",
  owner: "ana@example.com",
  purpose: "bench",
});
const send = (step?: CallRequest["step"]): CallRequest => ({
  callId: "bench",
  toolName: "send_email",
  actionId: "",
  argumentsJson: JSON.stringify(SEND),
  ...(step === undefined ? {} : { step }),
});
let fresh = 0;
await authorize(ctx, {
  grantToken: token,
  call: {
    callId: "seed",
    toolName: "lookup_contact",
    actionId: "",
    argumentsJson: '{"query":"Bo"}',
    step: { runId: "bench", toolCallId: "seed" },
  },
});
const variants: Record<string, () => CallRequest> = {
  "Authorize, no run (baseline)": () => send(),
  "Authorize, in a run": () => send({ runId: "bench", toolCallId: `tc-${fresh++}` }),
};
const names = Object.keys(variants);

async function perCall(name: string): Promise<number> {
  const make = variants[name] as () => CallRequest;
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const { verdict } = await authorize(ctx, { grantToken: token, call: make() });
    if (verdict.decision !== "allow")
      throw new Error(`${name}: ${verdict.reason?.code ?? verdict.decision}`);
  }
  return (performance.now() - start) / CALLS;
}

const times = await interleave(
  ROUNDS,
  Object.fromEntries(names.map((n) => [n, () => perCall(n)])) as Record<
    string,
    () => Promise<number>
  >,
);
const base = times[names[0] as string] as number[];
console.log(
  `runs bench: Authorize, ${ROUNDS} interleaved rounds of ${CALLS} calls per variant; ratio to the baseline, median [min-max]`,
);
for (const name of names) {
  const xs = (times[name] as number[]).map((t, r) => t / (base[r] as number));
  console.log(
    `  ${name.padEnd(28)} ${median(xs).toFixed(2)}x [${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}]`,
  );
}
await ctx.close();
rmSync(dir, { recursive: true, force: true });
