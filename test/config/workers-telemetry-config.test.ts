import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { DEFAULTS, isConfigError, resolveConfig } from "../../src/config/config.js";

// The settings of issue 13 part C: workers, the metrics endpoint and the trace export.

const REQUIRED = { CHARTER_CATALOG: "c.yaml", CHARTER_POLICY: "p.yaml" };

async function problems(env: Record<string, string>): Promise<string> {
  const err = await resolveConfig({ env: { ...REQUIRED, ...env } }).then(
    () => expect.fail("expected a ConfigError"),
    (e: unknown) => e,
  );
  expect(isConfigError(err)).toBe(true);
  return (err as Error).message;
}

describe("workers, metrics and tracing settings", () => {
  it("default to one worker per core, no metrics endpoint and no trace export", () => {
    expect(DEFAULTS).toMatchObject({
      workers: availableParallelism(),
      metricsListen: "",
      metricsAllowRemote: false,
      tracingOtlpEndpoint: "",
    });
  });

  it("are read from the environment, the switch as a boolean", async () => {
    const config = await resolveConfig({
      env: {
        ...REQUIRED,
        CHARTER_WORKERS: "3",
        CHARTER_METRICS_LISTEN: "127.0.0.1:9464",
        CHARTER_METRICS_ALLOW_REMOTE: "true",
        CHARTER_TRACING_OTLP_ENDPOINT: "http://127.0.0.1:4318/v1/traces",
      },
    });
    expect(config).toMatchObject({
      workers: 3,
      metricsListen: "127.0.0.1:9464",
      metricsAllowRemote: true,
      tracingOtlpEndpoint: "http://127.0.0.1:4318/v1/traces",
    });
  });

  it("refuse 0 workers, a metrics address that is not host:port, a switch that is not a boolean and an endpoint that is not http(s)", async () => {
    expect(await problems({ CHARTER_WORKERS: "0" })).toContain(
      "workers must be a positive integer",
    );
    expect(await problems({ CHARTER_METRICS_LISTEN: "9464" })).toContain(
      'metricsListen must be host:port, got "9464"',
    );
    expect(await problems({ CHARTER_METRICS_ALLOW_REMOTE: "yes" })).toContain(
      "metricsAllowRemote must be true or false",
    );
    expect(await problems({ CHARTER_TRACING_OTLP_ENDPOINT: "grpc://collector:4317" })).toContain(
      "tracingOtlpEndpoint must be an http:// or https:// URL",
    );
  });
});
