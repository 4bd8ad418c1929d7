/**
 * Group commit on SQLite (one WAL fdatasync per group): 64 decisions committed concurrently share one
 * transaction and one WAL flush; the baseline, measured in the same run, commits 64 decisions one
 * after another (one flush each). Read the ratio vitest prints, never the absolute times.
 *
 *   npm run bench
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, bench, describe } from "vitest";
import { openSqliteStore, type Store } from "../src/store/index.js";
import { makeDecision } from "../test/store/fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "charter-bench-group-"));
let store: Store;
let n = 0;
const BATCH = 64;

beforeAll(async () => {
  store = await openSqliteStore({ file: join(dir, "charter.db") });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("commitDecision x64 (allow with a budget charge)", () => {
  const effects = {
    budget: {
      actionId: "email.send",
      grants: [{ grantId: "g", maxCalls: Number.MAX_SAFE_INTEGER }],
    },
  };
  bench(
    "baseline: one after another (one flush each)",
    async () => {
      for (let i = 0; i < BATCH; i++)
        await store.commitDecision(makeDecision(`dec_s${n++}`), effects);
    },
    { iterations: 10 },
  );
  bench(
    "concurrent (group commit: one flush for the group)",
    async () => {
      await Promise.all(
        Array.from({ length: BATCH }, () =>
          store.commitDecision(makeDecision(`dec_c${n++}`), effects),
        ),
      );
    },
    { iterations: 10 },
  );
});
