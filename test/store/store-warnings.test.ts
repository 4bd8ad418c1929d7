import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { makeDecision } from "./fixtures.js";
import { tempDirs } from "./temp-dirs.js";

const dirs = tempDirs("charter-store-warnings");
afterEach(() => dirs.removeAll());

describe("the store's warnings", () => {
  it("go where the opener says (the server's log), not to process warnings", async () => {
    const processWarnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => {
      if (w.code === "CHARTER_WAL_CHECKPOINT") processWarnings.push(w.message);
    };
    process.on("warning", onWarning);
    const dataDir = dirs.make();
    const told: string[] = [];
    const store = await openStore({ dataDir, warn: (message) => told.push(message) });
    // A reader holding a snapshot keeps every checkpoint from emptying the WAL, which then grows
    // past the checkpointer's warning threshold (10,000 pages); long call ids make each decision
    // (its row and its audit record) a few pages of its own.
    const reader = new Database(join(dataDir, "charter.db"), { readonly: true });
    reader.exec("BEGIN");
    reader.prepare("SELECT count(*) FROM decisions").get();
    try {
      const long = "x".repeat(6000);
      for (let group = 0; group < 200 && told.length === 0; group++) {
        await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            store.commitDecision(
              makeDecision(`dec_${group}_${i}`, { callId: `${long}-${group}-${i}` }),
            ),
          ),
        );
      }
      expect(told.length).toBeGreaterThan(0);
      expect(told[0]).toMatch(/the WAL holds \d+ pages that a checkpoint could not all move/);
      expect(processWarnings).toEqual([]);
    } finally {
      reader.exec("COMMIT");
      reader.close();
      await store.close();
      process.off("warning", onWarning);
    }
  }, 60_000);
});
