import { createServer, type Server } from "node:http";
import type { Logger } from "pino";
import { ConfigError, type CharterConfig } from "../config/config.js";
import type { MetricsSource } from "../telemetry/index.js";
import { planListen } from "./listen.js";

/** A listening metrics endpoint. */
export interface MetricsEndpoint {
  readonly address: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text format) on `metricsListen`, a port of its own. The
 * endpoint has no authentication, so an address that is not loopback (judged by what the name
 * resolves to) is refused at start unless `metricsAllowRemote` is set. A scrape that fails (a
 * worker did not answer in time) is a 503; any other path is a 404.
 */
export async function startMetricsEndpoint(
  config: Pick<CharterConfig, "metricsListen" | "metricsAllowRemote">,
  metrics: MetricsSource,
  log: Logger,
): Promise<MetricsEndpoint> {
  const plan = await planListen(config.metricsListen).catch((err: unknown) => {
    throw new ConfigError(`metricsListen: ${(err as Error).message}`);
  });
  if (!plan.loopbackOnly && !config.metricsAllowRemote) {
    throw new ConfigError(
      `refusing to serve metrics on ${config.metricsListen} (${plan.addresses.join(", ")}): the metrics endpoint has no authentication, so it is served on loopback only; set metricsAllowRemote to serve it elsewhere`,
    );
  }
  const server: Server = createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    metrics.read().then(
      (text) => res.writeHead(200, { "content-type": metrics.contentType }).end(text),
      (err: unknown) => {
        log.warn({ err: { message: (err as Error).message } }, "metrics scrape failed");
        res.writeHead(503).end();
      },
    );
  });
  const host = plan.addresses[0] as string;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port: plan.port }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = server.address();
  const port = typeof bound === "object" && bound !== null ? bound.port : plan.port;
  const address = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  log.info({ address }, "metrics endpoint serving");
  return {
    address,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
