import type { Logger } from "pino";
import type { CharterConfig } from "../config/config.js";
import { catalogCacheSize } from "../authority/index.js";
import { sqliteStoreFile } from "../store/index.js";
import {
  installInstruments,
  registerCache,
  startTracing,
  type Tracing,
} from "../telemetry/index.js";
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
 * Prometheus recorder (installed for the authority, store and server instruments) with the
 * token cache and the compiled schemas registered, served on its own port — or, in a cluster worker, reported to the
 * primary, which serves the sum — and the OTLP trace export.
 */
export async function startProcessTelemetry(
  config: CharterConfig,
  ctx: AppContext,
  log: Logger,
  worker: number | undefined,
): Promise<ProcessTelemetry> {
  let endpoint: MetricsEndpoint | undefined;
  let tracing: Tracing | undefined;
  let unregister: () => void = () => undefined;
  if (config.metricsListen !== "") {
    const { createMetrics, registrySource, reportToClusterPrimary } =
      await import("../telemetry/metrics.js");
    const sqliteFile = sqliteStoreFile({
      dataDir: config.dataDir,
      ...(config.database === undefined ? {} : { url: config.database }),
    });
    const metrics = createMetrics(sqliteFile === undefined ? {} : { sqliteFile });
    if (worker === undefined)
      endpoint = await startMetricsEndpoint(config, registrySource(metrics.registry), log);
    else reportToClusterPrimary(metrics.registry);
    installInstruments(metrics.instruments);
    const unregisterToken = registerCache("token", () => {
      const s = ctx.verifier.stats();
      return {
        entries: s.size,
        bytes: s.bytes,
        hits: s.cacheHits,
        misses: s.signatureVerifications,
      };
    });
    // The compiler of the catalog in force (a reload brings a new one, with counts from 0).
    const unregisterSchemas = registerCache("schemas", () =>
      ctx.policySet().catalog.schemas.stats(),
    );
    // The rendered catalogs of the pair in force (a reload starts a new, empty cache).
    const unregisterCatalog = registerCache("catalog", () => catalogCacheSize(ctx.policySet()));
    unregister = () => {
      unregisterToken();
      unregisterSchemas();
      unregisterCatalog();
    };
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
      unregister();
      if (endpoint) installInstruments(undefined);
      await endpoint?.close();
      await tracing?.shutdown();
    },
  };
}
