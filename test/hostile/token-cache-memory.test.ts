import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { TOKEN_CACHE_HEAP_SCRIPT } from "../support/token-cache-heap.js";

const DIST = new URL("../../dist/token/index.js", import.meta.url);

interface HeapRun {
  readonly n: number;
  readonly tokenLength: number;
  readonly growthBytes: number;
  readonly size: number;
  readonly bytes: number;
  readonly refused: number;
}

function heapRun(count: number, budget: number, unique: boolean): HeapRun {
  const out = execFileSync(
    process.execPath,
    ["--expose-gc", "--input-type=module", "-e", TOKEN_CACHE_HEAP_SCRIPT],
    {
      encoding: "utf8",
      env: {
        ...process.env,
        TOKEN_MODULE: DIST.href,
        HEAP_COUNT: String(count),
        HEAP_BUDGET: String(budget),
        HEAP_UNIQUE: unique ? "1" : "0",
      },
    },
  );
  return JSON.parse(out) as HeapRun;
}

const MIB = 1024 * 1024;

// Measured before the interner: a cached 27 KB token held about 50 KB of heap (10,000 of them,
// about 500 MB), counted as 54 KB; now about 6.7 KB (7 KB when every grant's caveats are its own).
describe("the verifier's token cache memory", () => {
  it.each([
    ["grants that share their ids and caveats", false],
    ["grants whose caveats are all their own", true],
  ])(
    "stays under its byte budget, %s",
    (_name, unique) => {
      const budget = 4 * MIB;
      const run = heapRun(1500, budget, unique);
      expect(run.refused).toBe(0);
      expect(run.tokenLength).toBeGreaterThan(20_000);
      // Full: the budget, not the entry count, decided how many grants stayed.
      expect(run.size).toBeLessThan(run.n);
      expect(run.bytes).toBeLessThanOrEqual(budget);
      // What it counts is an upper bound of what it holds.
      expect(run.growthBytes).toBeLessThanOrEqual(run.bytes);
      // Shared ids and caveats make a cached grant far smaller than its token.
      if (!unique) expect(run.size * run.tokenLength).toBeGreaterThan(budget);
    },
    60_000,
  );
});
