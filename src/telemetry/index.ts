export {
  installInstruments,
  recordAuditCommitSince,
  recordDecision,
  recordRpcSince,
  recordShadowFlip,
  recordStoreSince,
  startTimer,
} from "./instruments.js";
export type { Instruments } from "./instruments.js";
export type { CacheStats, CacheStatsSource } from "./caches.js";
// `./metrics.js` (prom-client, about 45 ms to load) is imported on demand by whoever turns metrics on, not from here.
export type { CharterMetrics, MetricsSource } from "./metrics.js";
export { annotateSpan, startTracing, traced, tracingActive } from "./tracing.js";
export type { Tracing } from "./tracing.js";
