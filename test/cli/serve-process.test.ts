import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createCharterClients } from "../../src/client/index.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { serveProcess } from "../support/serve-process.js";

const dataDir = mkdtempSync(join(tmpdir(), "charter-serve-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Starts `charter serve` as `npm start` does (the demo config), but on an ephemeral port. */
const serve = () => serveProcess({ dataDir, keepStdout: true });

describe("charter serve (the quick start's server, as a process)", () => {
  it("serves the demo, reloads on SIGHUP, logs one JSON line per call without tokens, and exits 0 on SIGTERM", async () => {
    const server = await serve();
    const address = server.address;
    const clients = createCharterClients({ address });
    try {
      const { grantToken } = await clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:p",
        owner: "ana@example.com",
        purpose: "smoke",
      });
      const call = {
        callId: "c1",
        toolName: "web_search",
        argumentsJson: JSON.stringify({ query: "sk-live-SECRET-QUERY" }),
      };
      expect((await clients.authority.authorize({ grantToken, call })).verdict?.decision).toBe(
        Decision.ALLOW,
      );

      server.signal("SIGHUP");
      await new Promise((r) => setTimeout(r, 300));
      expect((await clients.authority.authorize({ grantToken, call })).verdict?.decision).toBe(
        Decision.ALLOW,
      );
    } finally {
      clients.close();
    }
    server.signal("SIGTERM");
    expect((await server.exited).code).toBe(0);

    const lines = server
      .stdout()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const rpcs = lines.filter((l) => l["msg"] === "rpc");
    expect(rpcs.map((l) => l["method"])).toEqual([
      "/charter.v1.GrantService/IssueGrant",
      "/charter.v1.AuthorityService/Authorize",
      "/charter.v1.AuthorityService/Authorize",
    ]);
    expect(rpcs.every((l) => l["status"] === "OK" && typeof l["durationMs"] === "number")).toBe(
      true,
    );
    expect(lines.some((l) => l["msg"] === "catalog and policy reloaded")).toBe(true);
    expect(server.stdout()).not.toContain("SECRET-QUERY");
    expect(server.stdout()).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\./);
  });
});
