import { AggregatorRegistry, Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { FastCounter, FastHistogram } from "../../src/telemetry/fast-metrics.js";

// Charter's allocation-free metrics print exactly what prom-client's own would, and sum across
// cluster workers the same way.

const BOUNDS = [0.001, 0.01, 0.1];
const OBSERVED: [string, string, number][] = [
  ["/a", "OK", 0.0005],
  ["/a", "OK", 0.001],
  ["/a", "OK", 0.05],
  ["/a", "UNAVAILABLE", 3],
  ["/b", "OK", 0.01],
];

function fast(): Registry {
  const registry = new Registry();
  const h = new FastHistogram("x_seconds", "help h", ["method", "status"], BOUNDS, registry);
  const c = new FastCounter("x_total", "help c", ["method", "status"], registry);
  for (const [m, s, v] of OBSERVED) {
    h.observe(h.child(m, s), v);
    c.child(m, s).n += 1;
  }
  return registry;
}

function reference(): Registry {
  const registry = new Registry();
  const h = new Histogram({
    name: "x_seconds",
    help: "help h",
    labelNames: ["method", "status"],
    buckets: BOUNDS,
    registers: [registry],
  });
  const c = new Counter({
    name: "x_total",
    help: "help c",
    labelNames: ["method", "status"],
    registers: [registry],
  });
  for (const [m, s, v] of OBSERVED) {
    h.labels(m, s).observe(v);
    c.labels(m, s).inc();
  }
  return registry;
}

describe("FastCounter and FastHistogram", () => {
  it("print what prom-client's Counter and Histogram print for the same observations", async () => {
    expect(await fast().metrics()).toBe(await reference().metrics());
  });

  it("sum across workers as prom-client's metrics do", async () => {
    const twice = async (make: () => Registry) => {
      const json = await make().getMetricsAsJSON();
      return AggregatorRegistry.aggregate([json, json]).metrics();
    };
    expect(await twice(fast)).toBe(await twice(reference));
  });
});
