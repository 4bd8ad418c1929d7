import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { memoryLog } from "../support/memory-log.js";

// "the per-RPC log says OK when the client got DEADLINE_EXCEEDED; caller text of any size is
// copied into error log lines" — against the real server, with thin spies around the real store.
const memory = memoryLog();

let charter: TestCharter;
beforeAll(async () => {
  const log = memory.log;
  charter = await startTestCharter({ log, config: { maxFieldLength: 100_000 } });
});
afterAll(async () => {
  await charter.stop();
});

describe("the per-RPC log line", () => {
  it("says DEADLINE_EXCEEDED when the work blocked the event loop past the client's deadline", async () => {
    const { grantToken } = await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "agent:slow",
      owner: "ana@example.com",
      purpose: "slow",
    });
    const store = charter.server.context.store as {
      commitDecision: (...a: never[]) => Promise<unknown>;
    };
    const commit = store.commitDecision.bind(store);
    store.commitDecision = (...a) => {
      const until = Date.now() + 400;
      while (Date.now() < until); // a synchronous stall, as a 2 s schema check was
      return commit(...a);
    };
    memory.clear();
    const err = await charter.clients.authority
      .authorize(
        { grantToken, call: { callId: "slow", toolName: "run_shell", argumentsJson: "{}" } },
        { timeoutMs: 150 },
      )
      .then(
        () => undefined,
        (e: unknown) => e as { code: number },
      );
    store.commitDecision = commit;
    expect(err?.code).toBe(4);
    await expect
      .poll(
        () =>
          memory.lines().find((l) => l["method"] === "/charter.v1.AuthorityService/Authorize")?.[
            "status"
          ],
      )
      .toBe("DEADLINE_EXCEEDED");
  });

  it("cuts caller text quoted by an error to a bounded length", async () => {
    const store = charter.server.context.store as { getGrant: (id: string) => Promise<unknown> };
    const getGrant = store.getGrant.bind(store);
    store.getGrant = (id) => Promise.reject(new Error(`lookup failed for ${id}`));
    memory.clear();
    const id = "x".repeat(50_000);
    await charter.clients.grants.getGrant({ grantId: id }).catch(() => undefined);
    store.getGrant = getGrant;
    const line = memory.lines().find((l) => l["method"] === "/charter.v1.GrantService/GetGrant");
    expect(line).toMatchObject({ status: "INTERNAL", msg: "rpc failed" });
    expect(JSON.stringify(line).length).toBeLessThan(5_000);
    expect((line?.["err"] as { message: string }).message).toMatch(
      /^lookup failed for x+…\[\d+ more\]$/,
    );
  });
});
