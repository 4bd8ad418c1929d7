import { availableParallelism } from "node:os";
import { address, boolean, httpUrl, integer } from "./types.js";
import { setting } from "./setting.js";

/** Server processes, the metrics endpoint and the trace export. */
export const PROCESS_SETTINGS = {
  workers: setting({
    type: integer({ min: 1 }),
    default: availableParallelism(),
    defaultText: "the number of cores",
    env: "CHARTER_WORKERS",
    flag: "workers",
    flagValue: "N",
    flagCommand: "serve",
    description:
      "server processes `charter serve` runs (node:cluster); `1` is a single process with no primary",
    reload: "restart",
  }),
  metricsListen: setting({
    type: address({ required: false }),
    default: "",
    defaultText: "(none: off)",
    env: "CHARTER_METRICS_LISTEN",
    description:
      "`host:port` of the Prometheus endpoint (`GET /metrics`, its own port); port 0 picks a free one. Loopback only unless `metricsAllowRemote`",
    reload: "restart",
  }),
  metricsAllowRemote: setting({
    type: boolean(),
    default: false,
    env: "CHARTER_METRICS_ALLOW_REMOTE",
    description:
      "`true` lets `metricsListen` be a non-loopback address; the endpoint has no authentication, so put it where only your Prometheus reaches it",
    reload: "restart",
  }),
  tracingOtlpEndpoint: setting({
    type: httpUrl(),
    default: "",
    defaultText: "(none: off)",
    env: "CHARTER_TRACING_OTLP_ENDPOINT",
    description:
      "OTLP/HTTP traces URL, e.g. `http://127.0.0.1:4318/v1/traces`; spans of every RPC and pipeline stage are batched there",
    reload: "restart",
    secret: "url-password",
  }),
} as const;
