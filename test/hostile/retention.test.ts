import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// "grants are never pruned": the server prunes expired grants after the retention period.
let charter: TestCharter;
let now = 1_800_000_000;
beforeAll(async () => {
  charter = await startTestCharter({
    now: () => now,
    config: { pruneIntervalSeconds: 1, grantRetentionSeconds: 60 },
  });
});
afterAll(async () => {
  await charter.stop();
});

describe("grant retention", () => {
  it("prunes a grant once it has been expired for the retention period, not before", async () => {
    const { grant } = await charter.clients.grants.issueGrant({
      profile: "email-drafter",
      subject: "agent:r",
      owner: "ana@example.com",
      purpose: "retention",
    });
    const id = grant?.id ?? "";
    const expiresAt = Number(grant?.expiresAt);
    now = expiresAt + 30; // expired, but within the retention period
    await new Promise((r) => setTimeout(r, 1300));
    expect((await charter.clients.grants.getGrant({ grantId: id })).grant?.id).toBe(id);
    now = expiresAt + 61;
    await expect
      .poll(
        () =>
          charter.clients.grants.getGrant({ grantId: id }).then(
            () => "kept",
            (e: unknown) => (e as { code: number }).code,
          ),
        { timeout: 3000 },
      )
      .toBe(5);
  });
});
