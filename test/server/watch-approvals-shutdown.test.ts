import { describe, expect, it } from "vitest";
import { startTestCharter } from "../support/charter-server.js";
import { within } from "../support/grpc.js";

describe("WatchApprovals and shutdown", () => {
  it("an open WatchApprovals stream ends promptly with UNAVAILABLE when the server stops", async () => {
    const charter = await startTestCharter();
    const watching = (async () => {
      for await (const _event of charter.clients.approvals.watchApprovals({
        owner: "ana@example.com",
      })) {
        // no events: the stream just waits
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    const stopped = charter.stop();
    await expect(within(watching, 2000, "the stream to end")).rejects.toMatchObject({ code: 14 });
    await stopped;
    expect(Date.now() - started).toBeLessThan(1500);
  });
});
