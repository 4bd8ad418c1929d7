import type { Logger } from "pino";
import type { CharterConfig } from "../config/config.js";
import { cacheStats } from "../authority/index.js";
import { sqliteStoreFile } from "../store/index.js";
import { installInstruments, startTracing, type Tracing } from "../telemetry/index.js";
import type { MetricsOptions } from "../telemetry/metrics.js";
import type { AppContext } from "./context.js";
import { startMetricsEndpoint, type MetricsEndpoint } from "./metrics-endpoint.js";

/** A server process's metrics and trace export, as configured; `stop` ends both. */
export interface ProcessTelemetry {
  /** Where `GET /metrics` is served (a single process with `metricsListen`; in a cluster the primary serves it). */
  readonly metricsAddress?: string;
  /** Metrics or traces are on (the RPC interceptor is worth adding). */
  readonly enabled: boolean;
  stop(): Promise<void>;
}

/**
 * Sets up what `metricsListen` and `tracingOtlpEndpoint` ask for in one server process: the
 * Prometheus recorder (installed for the authority, store and server instruments) reporting the
 * context's caches (`cacheStats`: token, schemas, catalog, ancestors), served on its own port — or, in a cluster worker, reported to the
 * primary, which serves the sum — and the OTLP trace export.
 */
export async function startProcessTelemetry(
  config: CharterConfig,
  ctx: AppContext,
  log: Logger,
  worker: number | undefined,
  sources: Pick<MetricsOptions, "webhookDeliveries"> = {},
): Promise<ProcessTelemetry> {
  let endpoint: MetricsEndpoint | undefined;
  let tracing: Tracing | undefined;
  let uninstall: () => void = () => undefined;
  if (config.metricsListen !== "") {
    const { createMetrics, registrySource, reportToClusterPrimary } =
      await import("../telemetry/metrics.js");
    const sqliteFile = sqliteStoreFile({
      dataDir: config.dataDir,
      ...(config.database === undefined ? {} : { url: config.database }),
    });
    const metrics = createMetrics({
      ...(sqliteFile === undefined ? {} : { sqliteFile }),
      caches: () => cacheStats(ctx),
      witnessFailures: () => ctx.auditWitness?.failures() ?? 0,
      ...sources,
    });
    if (worker === undefined)
      endpoint = await startMetricsEndpoint(config, registrySource(metrics.registry), log);
    else reportToClusterPrimary(metrics.registry);
    uninstall = installInstruments(metrics.instruments);
  }
  if (config.tracingOtlpEndpoint !== "") {
    tracing = await startTracing({
      endpoint: config.tracingOtlpEndpoint,
      attributes: worker === undefined ? {} : { "charter.worker": worker },
    });
  }
  return {
    ...(endpoint ? { metricsAddress: endpoint.address } : {}),
    enabled: config.metricsListen !== "" || tracing !== undefined,
    async stop() {
      if (endpoint) uninstall();
      await endpoint?.close();
      await tracing?.shutdown();
    },
  };
}
