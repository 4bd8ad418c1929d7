import { copyFileSync, renameSync, rmSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

// A store file deleted, replaced or truncated under a running server is noticed: every RPC fails
// UNAVAILABLE and nothing is allowed (better-sqlite3 would otherwise go on with an unlinked inode).

let charter: TestCharter;
let token: string;
beforeEach(async () => {
  charter = await startTestCharter();
  token = (
    await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "a",
      owner: "o",
      purpose: "p",
    })
  ).grantToken;
  expect((await authorize()).verdict?.decision).toBe(Decision.ALLOW);
});
afterEach(async () => {
  await charter.stop();
});

const authorize = () =>
  charter.clients.authority.authorize({
    grantToken: token,
    call: { callId: "c", toolName: "web_search", argumentsJson: '{"query":"q"}' },
  });
const db = () => join(charter.dataDir, "charter.db");

const tampering = [
  ["deleted", () => rmSync(db())],
  [
    "replaced",
    () => {
      copyFileSync(db(), `${db()}.copy`);
      renameSync(`${db()}.copy`, db());
    },
  ],
  ["truncated", () => truncateSync(db(), 0)],
  ["stripped of its WAL", () => rmSync(`${db()}-wal`)],
] as const;

describe.each(tampering)("a store file %s under the running server", (_what, tamper) => {
  it("makes the next Authorize an error, never an allow, and every other RPC UNAVAILABLE too", async () => {
    tamper();
    await expect(authorize()).rejects.toMatchObject({ code: status.UNAVAILABLE });
    await expect(
      charter.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "a",
        owner: "o",
        purpose: "p",
      }),
    ).rejects.toMatchObject({
      code: status.UNAVAILABLE,
    });
    await expect(charter.clients.catalog.getCatalog({ grantToken: token })).rejects.toMatchObject({
      code: status.UNAVAILABLE,
    });
    await expect(charter.clients.keys.getJwks({})).rejects.toMatchObject({
      code: status.UNAVAILABLE,
    });
    // It stays failed: the store is not trusted again until Charter restarts on an intact one.
    await expect(authorize()).rejects.toMatchObject({ code: status.UNAVAILABLE });
  });
});
