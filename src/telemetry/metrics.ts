import { statSync } from "node:fs";
import { AggregatorRegistry, Counter, Gauge, Registry } from "prom-client";
import type { CacheStatsSource } from "./caches.js";
import { FastCounter, FastHistogram } from "./fast-metrics.js";
import type { Instruments } from "./instruments.js";

/** A process's Prometheus metrics and the recorder that feeds them. */
export interface CharterMetrics {
  readonly registry: Registry;
  readonly instruments: Instruments;
}

/** The label values of `charter_shadow_flips_total`: the four decision kinds. */
const DECISION_KINDS: ReadonlySet<string> = new Set([
  "allow",
  "deny",
  "require_approval",
  "effect_suppressed",
]);

/** Latency buckets in seconds: 50 µs to 2.5 s (Charter's calls are sub-millisecond to a few ms). */
const LATENCY_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];

/** What `createMetrics` reads at each scrape besides its own counters. */
export interface MetricsOptions {
  readonly sqliteFile?: string;
  readonly caches?: CacheStatsSource;
  /** Failed audit witness deliveries so far (read at each scrape). */
  readonly witnessFailures?: () => number;
  /** Webhook delivery attempts so far, by configured webhook name and outcome (read at each scrape). */
  readonly webhookDeliveries?: () => readonly {
    readonly webhook: string;
    readonly outcome: string;
    readonly count: number;
  }[];
}

/**
 * The metrics of one server process, in a registry of its own: decisions by verdict and reason,
 * RPC latency by method and status, store-operation and audit-commit latency, and the caches
 * `caches` reads (entries, bytes, hits, misses: an application context's, read at each scrape), and with an embedded store the size
 * of its SQLite write-ahead log (`sqliteFile`). The hot-path metrics are
 * `FastCounter`/`FastHistogram`: label children made once per label set and kept, so recording
 * allocates nothing and hashes nothing.
 */
export function createMetrics(options: MetricsOptions = {}): CharterMetrics {
  const registry = new Registry();
  const decisions = new FastCounter(
    "charter_decisions_total",
    "Verdicts answered, by verdict and reason code",
    ["verdict", "reason"],
    registry,
  );
  const flips = new FastCounter(
    "charter_shadow_flips_total",
    "Decisions the shadow policy decided otherwise, by the live verdict and the shadow's",
    ["from", "to"],
    registry,
  );
  const rpcs = new FastHistogram(
    "charter_rpc_duration_seconds",
    "RPC latency by method and the status the client got",
    ["method", "status"],
    LATENCY_BUCKETS,
    registry,
  );
  const store = new FastHistogram(
    "charter_store_operation_seconds",
    "Store operation latency by operation",
    ["operation"],
    LATENCY_BUCKETS,
    registry,
  );
  const auditCommit = new FastHistogram(
    "charter_audit_commit_seconds",
    "Durable group commits of the audit log (transaction and flush)",
    [],
    LATENCY_BUCKETS,
    registry,
  );
  const auditUnits = new FastCounter(
    "charter_audit_commit_units_total",
    "Units of work committed by the audit group commits",
    [],
    registry,
  );
  cacheMetrics(registry, options.caches ?? (() => []));
  const witnessFailures = options.witnessFailures ?? (() => 0);
  new Counter({
    name: "charter_audit_witness_failures_total",
    help: "Audit checkpoints a witness (auditWitnessFile, auditWitnessCommand) failed to take; retried at the next checkpoint",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(witnessFailures());
    },
  });
  const webhookDeliveries = options.webhookDeliveries ?? (() => []);
  new Counter({
    name: "charter_webhook_deliveries_total",
    help: "Webhook delivery attempts by webhook (its configured name) and outcome: delivered, failed (retried), abandoned",
    labelNames: ["webhook", "outcome"],
    registers: [registry],
    collect() {
      this.reset();
      for (const d of webhookDeliveries())
        this.inc({ webhook: d.webhook, outcome: d.outcome }, d.count);
    },
  });
  if (options.sqliteFile !== undefined) walMetrics(registry, `${options.sqliteFile}-wal`);
  const commits = auditCommit.child();
  const units = auditUnits.child();
  return {
    registry,
    instruments: {
      decision: (verdict, reason) => void (decisions.child(verdict, reason).n += 1),
      shadowFlip: (from, to) => {
        // Bounded: the four decision kinds only, whatever a caller passes.
        if (DECISION_KINDS.has(from) && DECISION_KINDS.has(to)) flips.child(from, to).n += 1;
      },
      rpc: (method, status, seconds) => rpcs.observe(rpcs.child(method, status), seconds),
      store: (operation, seconds) => store.observe(store.child(operation), seconds),
      auditCommit: (seconds, n) => {
        auditCommit.observe(commits, seconds);
        units.n += n;
      },
    },
  };
}

/** Cache gauges and counters, filled from `readCaches` when scraped (counters advance by the change since the last scrape). */
function cacheMetrics(registry: Registry, readCaches: CacheStatsSource): void {
  const last = new Map<string, number>();
  const advance = (counter: Counter, kind: string, cache: string, total: number | undefined) => {
    if (total === undefined) return;
    const key = `${kind}\u0000${cache}`;
    const delta = total - (last.get(key) ?? 0);
    last.set(key, total);
    // A cache made again (a new context) starts from 0: count it from there.
    counter.inc({ cache }, delta >= 0 ? delta : total);
  };
  const hits = new Counter({
    name: "charter_cache_hits_total",
    help: "Lookups answered by a cache",
    labelNames: ["cache"],
    registers: [registry],
  });
  const misses = new Counter({
    name: "charter_cache_misses_total",
    help: "Lookups a cache could not answer",
    labelNames: ["cache"],
    registers: [registry],
  });
  new Gauge({
    name: "charter_cache_entries",
    help: "Entries a cache holds",
    labelNames: ["cache"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [cache, stats] of readCaches()) {
        this.set({ cache }, stats.entries);
        advance(hits, "hits", cache, stats.hits);
        advance(misses, "misses", cache, stats.misses);
      }
    },
  });
  new Gauge({
    name: "charter_cache_bytes",
    help: "Bytes a cache's entries are counted as",
    labelNames: ["cache"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [cache, stats] of readCaches())
        if (stats.bytes !== undefined) this.set({ cache }, stats.bytes);
    },
  });
}

/**
 * The WAL's size in bytes, read (one stat) at each scrape: it stays bounded while the store's
 * checkpointer can empty it, and grows while a reader (another process, a backup) holds an old
 * snapshot. Every worker of a cluster shares the file: their values are one file's, so the
 * primary reports the largest, not the sum. 0 while there is no WAL file.
 */
function walMetrics(registry: Registry, wal: string): void {
  new Gauge({
    name: "charter_sqlite_wal_bytes",
    help: "Size of the embedded store's SQLite write-ahead log",
    registers: [registry],
    aggregator: "max",
    collect() {
      this.set(statSync(wal, { throwIfNoEntry: false })?.size ?? 0);
    },
  });
}

/** In a cluster worker: answer the primary's metrics requests with this registry (prom-client's own IPC messages). */
export function reportToClusterPrimary(registry: Registry): void {
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}

/** What a metrics endpoint serves: the text of a scrape and its content type. */
export interface MetricsSource {
  readonly contentType: string;
  read(): Promise<string>;
}

/** One process's registry as an endpoint's source. */
export function registrySource(registry: Registry): MetricsSource {
  return { contentType: Registry.PROMETHEUS_CONTENT_TYPE, read: () => registry.metrics() };
}

/** In the cluster primary: every worker's metrics, summed (counters and histograms add; cache gauges add up across workers). */
export function clusterMetricsSource(): MetricsSource {
  const aggregator = new AggregatorRegistry();
  return { contentType: Registry.PROMETHEUS_CONTENT_TYPE, read: () => aggregator.clusterMetrics() };
}
