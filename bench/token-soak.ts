/**
 * The verifier's token cache under a long stream of distinct grant tokens: RSS must stay flat
 * once the cache is full (the median RSS of the last quarter of the run within 10 % of the
 * first quarter's; the min–max band printed beside it is mostly the garbage collector's
 * sawtooth; with --expose-gc, as the npm script runs it, RSS is read after a full collection), and
 * the cache within its byte budget. Each step signs a
 * grant token (300 granted actions of a generated 1,000-action catalog, with their caveats:
 * about 26 KB, the size the issue measured) for one of 100,000 distinct grants, or, one step in
 * four, for one of a hot set of 1,000, then verifies it through one verifier (the default
 * 64 MiB budget) and decides a call under it. RSS and the cache's figures are sampled every few
 * seconds.
 *
 *   npm run bench:soak              5 minutes and 100,000 distinct tokens (it runs on until both)
 *   npm run bench:soak -- --quick   30 seconds and 10,000 distinct tokens
 */
import { buildCatalog, buildPolicy, compose, assess } from "../src/core/index.js";
import { openSqliteStore } from "../src/store/index.js";
import {
  createGrantVerifier,
  DEFAULT_VERIFIER_BYTES,
  openKeyRing,
  SHARED_BYTES_FRACTION,
  signGrantToken,
} from "../src/token/index.js";
import {
  allowedGeneratedAction,
  generatedAction,
  generatedArguments,
  generatedCatalog,
  generatedPolicy,
  GENERATED_PROFILE,
} from "./generated-catalog.js";
import { fmt, median } from "./rounds.js";

const QUICK = process.argv.includes("--quick");
const SECONDS = Number(process.env["SOAK_SECONDS"] ?? (QUICK ? 30 : 300));
const DISTINCT = Number(process.env["SOAK_TOKENS"] ?? (QUICK ? 10_000 : 100_000));
const HOT = 1000;
const SAMPLE_MS = QUICK ? 1000 : 5000;
/** Flatness is judged from the first sample after the cache has filled (its counted bytes within 10 % of the budget) and a tenth of the run more. */
const FULL = 0.9;
const NOW = 1_800_000_000;
const parties = { issuer: "soak", audience: "soak" };

const sizes = { actions: 1000, granted: 300 };
const catalog = buildCatalog(generatedCatalog(sizes), "generated-catalog");
const policy = buildPolicy(generatedPolicy(sizes), catalog, "generated-policy");
const composed = compose(
  { profile: GENERATED_PROFILE, subject: "agent:soak", owner: "user:soak", purpose: "soak" },
  policy,
  catalog,
  NOW,
  "grt_soak",
);
if (composed.kind !== "granted") throw new Error("the generated policy must compose");
const base = composed.grant;
const store = await openSqliteStore({ file: ":memory:" });
const ring = await openKeyRing(store, { now: NOW });
const verifier = createGrantVerifier(ring, parties);
const i = allowedGeneratedAction(sizes);
const call = { callId: "c", toolName: generatedAction(i).tool, arguments: generatedArguments(i) };

const tokenFor = (n: number) =>
  signGrantToken({ ...base, id: `grt_soak_${n}`, rootId: `grt_soak_${n}` }, ring, parties);
/** Run with --expose-gc (npm run bench:soak does): each sample also reads RSS right after a full collection, what the cache retains without the sawtooth of garbage waiting for the collector. */
const gc = (globalThis as { gc?: () => void }).gc;
const sample = () => {
  const { rss, heapUsed } = process.memoryUsage();
  gc?.();
  const after = process.memoryUsage();
  return {
    at: performance.now(),
    rss,
    heap: heapUsed,
    rssAfterGc: after.rss,
    heapAfterGc: after.heapUsed,
    ...verifier.stats(),
  };
};
const samples: ReturnType<typeof sample>[] = [];
const start = performance.now();
let steps = 0;
let next = 0;
let lastSample = start;
let length = 0;
// Runs for SECONDS, and on until every one of the DISTINCT tokens has been verified once.
const visited = () => HOT + Math.min(next, DISTINCT - HOT);
while (performance.now() - start < SECONDS * 1000 || visited() < DISTINCT) {
  const n = steps % 4 === 0 ? steps % HOT : HOT + (next++ % (DISTINCT - HOT));
  const token = await tokenFor(n);
  length = token.length;
  const verified = await verifier.verify(token, NOW + 1);
  if (!verified.ok) throw new Error(verified.message);
  if (assess(verified.grant, catalog, call, { now: NOW + 1 }).verdict.decision !== "allow")
    throw new Error("the soak call must be allowed");
  steps += 1;
  if (performance.now() - lastSample >= SAMPLE_MS) {
    lastSample = performance.now();
    const s = sample();
    samples.push(s);
    const mib = (b: number) => (b / 2 ** 20).toFixed(1);
    console.log(
      `${((s.at - start) / 1000).toFixed(0).padStart(4)} s  rss ${mib(s.rss)} MiB (${mib(s.rssAfterGc)} after gc)  heap ${mib(s.heap)} MiB (${mib(s.heapAfterGc)} after gc)  cache ${s.size} grants, ${mib(s.bytes)} MiB counted  hits ${s.cacheHits}  verifications ${s.signatureVerifications}`,
    );
  }
}
await store.close();

const fullAt = samples.find(
  (s) => s.bytes >= FULL * (1 - SHARED_BYTES_FRACTION) * DEFAULT_VERIFIER_BYTES,
)?.at;
if (fullAt === undefined) throw new Error("the cache never filled: run longer (SOAK_SECONDS)");
const settled = samples.filter((s) => s.at >= fullAt + 0.1 * SECONDS * 1000);
const rss = settled.map((s) => (gc ? s.rssAfterGc : s.rss));
const first = median(rss.slice(0, Math.max(1, Math.floor(rss.length / 4))));
const last = median(rss.slice(-Math.max(1, Math.floor(rss.length / 4))));
const band = (Math.max(...rss) - Math.min(...rss)) / Math.min(...rss);
const seconds = (performance.now() - start) / 1000;
console.log(
  `${steps} steps in ${fmt(seconds)} s, ${visited()} distinct tokens of ${length} bytes; token cache budget ${fmt(DEFAULT_VERIFIER_BYTES / 2 ** 20)} MiB, full after ${fmt((fullAt - start) / 1000)} s`,
);
console.log(
  `RSS${gc ? " after gc" : " (run with --expose-gc to read it after a collection)"} once full (${settled.length} samples): min ${fmt(Math.min(...rss) / 2 ** 20)} MiB, max ${fmt(Math.max(...rss) / 2 ** 20)} MiB, band ${(band * 100).toFixed(1)}%; raw RSS ${fmt(Math.min(...settled.map((s) => s.rss)) / 2 ** 20)}–${fmt(Math.max(...settled.map((s) => s.rss)) / 2 ** 20)} MiB (the collector's sawtooth)`,
);
console.log(
  `RSS, median of the first vs the last quarter once full: ${fmt(first / 2 ** 20)} -> ${fmt(last / 2 ** 20)} MiB (${(((last - first) / first) * 100).toFixed(1)}%; target: within 10%)`,
);
