/**
 * What a step costs in Authorize, in process on the embedded SQLite store, against a baseline
 * measured in the same run: a call without a step (every call a new decision; the baseline), a
 * call of a new step (the step index is read, then claimed in the commit), and a retry of a step
 * already decided (answered from the step index: nothing decided, signed or written). Rounds are
 * interleaved (the order rotates each round) and the ratios are medians over rounds, with their
 * spread, because these machines are shared and noisy: read the ratios, never the absolute times.
 *
 *   npm run bench:steps            (BENCH_ROUNDS=15, BENCH_CALLS=200 per variant and round)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createAppContext } from "../src/app/context.js";
import { authorize, issueGrant, type CallRequest } from "../src/authority/index.js";
import { DEFAULTS } from "../src/config/config.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 15);
const CALLS = Number(process.env["BENCH_CALLS"] ?? 200);
const FIXTURE = join(ROOT, "fixtures", "refund-workflow");

const dir = mkdtempSync(join(tmpdir(), "charter-bench-steps-"));
// The workflow's policy without its call budget: the bench makes thousands of allowed calls.
const policy = join(dir, "policy.yaml");
writeFileSync(
  policy,
  readFileSync(join(FIXTURE, "policy.yaml"), "utf8").replace("maxCalls: 20, ", ""),
);
const ctx = await createAppContext({
  ...DEFAULTS,
  dataDir: join(dir, "data"),
  catalog: join(FIXTURE, "catalog.yaml"),
  policy,
});
const { token } = await issueGrant(ctx, {
  profile: "refund-workflow",
  subject: "graph:bench",
  owner: "ana@example.com",
  purpose: "bench",
});

const lookup = (step?: CallRequest["step"]): CallRequest => ({
  callId: "bench",
  toolName: "",
  actionId: "refund.lookup_order",
  argumentsJson: '{"order_id":"ord_A1B2C3"}',
  target: {
    kind: "graph_operation",
    nodeName: "lookup-order",
    operationDefinitionId: "refund.lookup_order",
    operationKind: "activity",
  },
  ...(step === undefined ? {} : { step }),
});

let fresh = 0;
const variants: Record<string, () => CallRequest> = {
  "no step (baseline)": () => lookup(),
  "a new step": () => lookup({ runId: "bench", activationId: `act-${fresh++}`, attempt: 1 }),
  "a retry of a decided step": () => lookup({ runId: "bench", activationId: "held", attempt: 1 }),
};
const names = Object.keys(variants);
await authorize(ctx, {
  grantToken: token,
  call: lookup({ runId: "bench", activationId: "held", attempt: 1 }),
});

/** Milliseconds per call of one variant: CALLS calls, one at a time (each awaits its commit). */
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

const ratios = new Map<string, number[]>(names.map((n) => [n, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = names.map((_, i) => names[(i + round) % names.length] as string);
  const times = new Map<string, number>();
  for (const name of order) times.set(name, await perCall(name));
  const base = times.get(names[0] as string) as number;
  for (const name of names) ratios.get(name)?.push((times.get(name) as number) / base);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
console.log(
  `steps bench: ${ROUNDS} interleaved rounds of ${CALLS} calls per variant; ratio to the baseline, median [min-max]`,
);
for (const [name, xs] of ratios) {
  console.log(
    `  ${name.padEnd(28)} ${median(xs).toFixed(2)}x [${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}]`,
  );
}
await ctx.close();
rmSync(dir, { recursive: true, force: true });
