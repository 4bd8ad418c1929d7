import { appendFileSync } from "node:fs";

/**
 * Preloaded into the server `bench:abuse` measures (`node --expose-gc --import …`): SIGUSR2 runs a
 * full garbage collection, so that RSS read after the abusers leave counts what the server still
 * holds, not V8 heap it has not collected yet. With `BENCH_GC_LOG` set, each collection appends
 * `process.memoryUsage()` after it to that file (where the RSS is: V8 heap, buffers, or neither).
 */
const gc = (globalThis as { gc?: () => void }).gc;
const log = process.env["BENCH_GC_LOG"];
process.on("SIGUSR2", () => {
  gc?.();
  if (log !== undefined) appendFileSync(log, `${JSON.stringify(process.memoryUsage())}\n`);
});
