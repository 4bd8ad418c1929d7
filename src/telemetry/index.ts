export { installInstruments, recordAuditCommitSince, recordDecision, recordRpcSince, recordStoreSince, startTimer } from "./instruments.js";
export type { Instruments } from "./instruments.js";
export { readCaches, registerCache } from "./caches.js";
export type { CacheStats } from "./caches.js";
export { METRICS_CONTENT_TYPE, clusterMetricsSource, createMetrics, reportToClusterPrimary } from "./metrics.js";
export type { CharterMetrics } from "./metrics.js";
export { annotateSpan, startTracing, traced } from "./tracing.js";
export type { Tracing } from "./tracing.js";
