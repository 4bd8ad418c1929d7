import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT_RPC_FAILED } from "../../src/cli/target.js";
import { FIXTURES, type TestCharter } from "../support/charter-server.js";
import { runCapture } from "../support/cli.js";
import { inboxUrl, pendingApproval, startInboxCharter } from "../inbox/inbox-fixture.js";

// `charter approvals link ID --approver P`: a single-use inbox link as a full URL, made by the
// server (--server) or offline on its data dir (the URL the serving process recorded).
let charter: TestCharter;
let approvalId: string;
beforeAll(async () => {
  charter = await startInboxCharter();
  approvalId = (await pendingApproval(charter)).id;
});
afterAll(async () => {
  await charter.stop();
});

const files = [
  "--data-dir",
  "",
  "--catalog",
  join(FIXTURES, "catalog.yaml"),
  "--policy",
  join(FIXTURES, "policy.yaml"),
];
const offline = (env: Record<string, string>, ...args: string[]) =>
  runCapture([...args, ...files.map((f) => (f === "" ? charter.dataDir : f))], env);

describe("charter approvals link", () => {
  it("prints one full URL with --server and offline, a new link each time", async () => {
    const args = ["approvals", "link", approvalId, "--approver", "ana@example.com"];
    const online = await runCapture([...args, "--server", `127.0.0.1:${charter.server.port}`]);
    const local = await offline({ CHARTER_INBOX_LISTEN: "127.0.0.1:0" }, ...args);
    for (const run of [online, local]) {
      expect(run).toMatchObject({ code: 0, err: "" });
      expect(run.out).toMatch(new RegExp(`^${inboxUrl(charter)}/l/[A-Za-z0-9_-]{43}\\n$`));
    }
    expect(online.out).not.toBe(local.out);
    const named = await offline(
      { CHARTER_INBOX_PUBLIC_URL: "https://inbox.example.com/" },
      ...args,
    );
    expect(named.out).toMatch(/^https:\/\/inbox\.example\.com\/l\/[A-Za-z0-9_-]{43}\n$/);
  });

  it("refuses without --approver, for an approver who cannot answer, and without an inbox", async () => {
    const noApprover = await offline({}, "approvals", "link", approvalId);
    expect(noApprover.code).not.toBe(0);
    expect(noApprover.err).toContain("--approver PRINCIPAL is required");
    const stranger = await runCapture([
      ...["approvals", "link", approvalId, "--approver", "eve@example.com"],
      ...["--server", `127.0.0.1:${charter.server.port}`],
    ]);
    expect(stranger.code).toBe(EXIT_RPC_FAILED);
    expect(stranger.err).toContain("PERMISSION_DENIED");
    const none = await offline(
      {},
      "approvals",
      "link",
      approvalId,
      "--approver",
      "ana@example.com",
    );
    expect(none.code).not.toBe(0);
    expect(none.err).toContain("approval links need the inbox");
  });
});
