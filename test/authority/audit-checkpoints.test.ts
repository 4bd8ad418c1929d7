import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAppContext, type AppContext } from "../../src/app/context.js";
import { authorizeBatch, issueGrant } from "../../src/authority/index.js";
import { DEFAULTS } from "../../src/config/config.js";
import { FIXTURES } from "../support/charter-server.js";

// The checkpointer counts what the store says it appended (Store.onAuditAppended): no layer above
// the store keeps its own count of the records a grant, a decision or an approval writes.

let dataDir: string;
let app: AppContext;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "charter-checkpoints-"));
  app = await createAppContext({
    ...DEFAULTS,
    dataDir,
    catalog: join(FIXTURES, "catalog.yaml"),
    policy: join(FIXTURES, "policy.yaml"),
    auditCheckpointRecords: 5,
  });
});
afterEach(async () => {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function checkpointed(): Promise<number[]> {
  // Signed in the background once the count is reached: give it a few turns of the event loop.
  for (let i = 0; i < 200; i++) {
    const seqs = (await app.store.listCheckpoints()).map((c) => c.seq);
    if (seqs.length > 0) return seqs;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return [];
}

describe("audit checkpoints", () => {
  it("are signed once the store has appended auditCheckpointRecords records", async () => {
    const { token } = await issueGrant(app, {
      profile: "owner-assistant",
      subject: "agent-1",
      owner: "ana",
      purpose: "checkpoints",
    });
    const call = (id: string) => ({
      callId: id,
      toolName: "web_search",
      actionId: "",
      argumentsJson: '{"query":"q"}',
    });
    await authorizeBatch(app, { grantToken: token, calls: [call("a"), call("b"), call("c")] });
    expect(await app.store.listCheckpoints()).toEqual([]);
    await authorizeBatch(app, { grantToken: token, calls: [call("d")] });
    // 1 grant record + 4 decision records: the fifth record made the checkpoint.
    expect(await checkpointed()).toEqual([5]);
  });
});
