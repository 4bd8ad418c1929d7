/**
 * Decision-to-webhook-delivered latency: a real Charter server (in this process, embedded SQLite,
 * one `json` webhook) and a real local HTTP receiver. Each sample holds a call (an approval is
 * created, its `created` delivery awaited), then decides it and times until the receiver has the
 * signed `decided` message. Two paths: the decision made through the server (DecideApproval over
 * gRPC: this process's approval feed wakes the deliverer at once) and the decision made by another
 * process on the same store (a second application context, as `charter approvals approve` offline
 * or another replica: found by the store poll). The baseline, measured in the same rounds, is
 * the DecideApproval round trip itself; figures are p50/p95 over all samples, with ratios to the
 * baseline. The issue's target: p95 ≤ 2 s.
 *
 *   npm run bench:webhooks      (BENCH_ROUNDS=5, BENCH_SAMPLES=20 per round and path)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { startCharter } from "../src/app/charter.js";
import { createAppContext } from "../src/app/context.js";
import { decideApproval } from "../src/authority/index.js";
import { createCharterClients } from "../src/client/index.js";
import { DEFAULTS, type CharterConfig } from "../src/config/config.js";
import { ApprovalOutcome } from "../src/gen/charter/v1/approval_pb.js";
import { benchCommand, shortRunNote, writePerfReport } from "./perf-report.js";
import { fmt } from "./rounds.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 5);
const SAMPLES = Number(process.env["BENCH_SAMPLES"] ?? 20);
const OWNER = "ana@example.com";

// The receiver: resolves the waiter of a message when it arrives (or answers it, when it came first).
const arrivals = new Map<string, (at: number) => void>();
const arrived = new Map<string, number>();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const at = performance.now();
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      type: string;
      data: { approval: { id: string } };
    };
    res.writeHead(204).end();
    const key = `${body.type} ${body.data.approval.id}`;
    arrived.set(key, at);
    arrivals.get(key)?.(at);
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const { port } = receiver.address() as AddressInfo;
const arrival = (type: string, id: string) =>
  new Promise<number>((resolve) => {
    const key = `${type} ${id}`;
    const at = arrived.get(key);
    if (at === undefined) arrivals.set(key, resolve);
    else resolve(at);
  });

const dir = mkdtempSync(join(tmpdir(), "charter-bench-webhooks-"));
process.env["CHARTER_BENCH_WEBHOOK_SECRET"] = "bench-webhook-secret-0123456789";
writeFileSync(
  join(dir, "webhooks.yaml"),
  `webhooks:\n  - { name: bench, url: "http://127.0.0.1:${port}/", format: json, secretEnv: CHARTER_BENCH_WEBHOOK_SECRET }\n`,
);
const config: CharterConfig = {
  ...DEFAULTS,
  listen: "127.0.0.1:0",
  dataDir: join(dir, "data"),
  catalog: join(ROOT, "fixtures", "catalog.yaml"),
  policy: join(ROOT, "fixtures", "policy.yaml"),
  auth: "none",
  createStore: "if-missing",
  logLevel: "silent",
  webhooks: join(dir, "webhooks.yaml"),
};
const server = await startCharter(config, { log: pino({ level: "silent" }) });
const clients = createCharterClients({ address: `127.0.0.1:${server.port}` });
// Another process's view of the same store: its decisions reach the server only through the store.
const other = await createAppContext(config, { tokenCacheSize: 1 });

let amount = 1;
/** A held call's approval, once its `created` message has arrived (so only `decided` is timed). */
async function held(): Promise<string> {
  const { grantToken } = await clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:bench",
    owner: OWNER,
    purpose: "bench",
  });
  amount += 1;
  const { verdict } = await clients.authority.authorize({
    grantToken,
    call: {
      callId: "c",
      toolName: "charge_payment",
      argumentsJson: JSON.stringify({
        customer_id: "cus_ABC123",
        amount,
        currency: "EUR",
        description: "bench",
      }),
    },
  });
  const id = verdict?.approvalId ?? "";
  await arrival("approval.created", id);
  return id;
}

const decideRpc: number[] = [];
const viaServer: number[] = [];
const viaStore: number[] = [];

async function sampleServer(): Promise<void> {
  const id = await held();
  const decided = arrival("approval.decided", id);
  const start = performance.now();
  await clients.approvals.decideApproval({
    approvalId: id,
    outcome: ApprovalOutcome.APPROVE,
    decidedBy: OWNER,
    note: "",
  });
  decideRpc.push(performance.now() - start);
  viaServer.push((await decided) - start);
}

async function sampleStore(): Promise<void> {
  const id = await held();
  const decided = arrival("approval.decided", id);
  const start = performance.now();
  await decideApproval(other, { approvalId: id, outcome: "approve", decidedBy: OWNER, note: "" });
  viaStore.push((await decided) - start);
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

await sampleServer(); // warm up
await sampleStore();
decideRpc.length = viaServer.length = viaStore.length = 0;
for (let r = 0; r < ROUNDS; r++) {
  for (let i = 0; i < SAMPLES; i++) await sampleServer();
  for (let i = 0; i < SAMPLES; i++) await sampleStore();
}

const base50 = percentile(decideRpc, 50);
const base95 = percentile(decideRpc, 95);
const rows = [
  ["DecideApproval round trip (baseline)", decideRpc],
  ["decided → webhook delivered, via this server", viaServer],
  ["decided → webhook delivered, by another process", viaStore],
] as const;
const table = [
  ["path", "p50 ms", "p95 ms", "p50 / baseline", "p95 / baseline"],
  ...rows.map(([name, v]) => [
    name,
    fmt(percentile(v, 50)),
    fmt(percentile(v, 95)),
    `${(percentile(v, 50) / base50).toFixed(2)}x`,
    `${(percentile(v, 95) / base95).toFixed(2)}x`,
  ]),
];
const worst95 = Math.max(percentile(viaServer, 95), percentile(viaStore, 95));
console.log(`bench:webhooks  ${ROUNDS} rounds × ${SAMPLES} samples per path`);
for (const row of table) console.log(`  ${row.join("  |  ")}`);
console.log(`  target p95 ≤ 2000 ms: ${worst95 <= 2000 ? "met" : "NOT met"} (${fmt(worst95)} ms)`);
const path = writePerfReport(ROOT, {
  name: "approval-webhooks",
  title: "bench:webhooks — decision to webhook delivered",
  command: benchCommand("bench:webhooks", ["BENCH_ROUNDS", "BENCH_SAMPLES"]),
  settings: [
    `${ROUNDS} rounds × ${SAMPLES} samples per path`,
    ...shortRunNote(ROUNDS < 5 || SAMPLES < 20),
  ],
  table,
  notes: [
    "One `json` webhook on a loopback receiver; embedded SQLite store. The baseline is the DecideApproval round trip of the same samples.",
    "Via this server, the approval feed wakes the deliverer at once; by another process (offline CLI, another replica), the event is found by the store poll (500 ms while the deliverer waits).",
    `Target (issue 25): p95 ≤ 2 s: ${worst95 <= 2000 ? "met" : "NOT met"}.`,
  ],
});
if (path !== undefined) console.log(`  report: ${path}`);

clients.close();
await other.close();
await server.stop(2000);
await new Promise((resolve) => receiver.close(resolve));
rmSync(dir, { recursive: true, force: true });
