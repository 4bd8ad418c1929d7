import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createCharterClients } from "../../src/client/index.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const BIN = join(ROOT, "dist", "cli", "bin.js");
const dataDir = mkdtempSync(join(tmpdir(), "charter-serve-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Starts `charter serve` as `npm start` does (the demo config), but on an ephemeral port. */
function serve(): {
  child: ChildProcess;
  address: Promise<string>;
  stdout: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn(
    process.execPath,
    [
      BIN,
      "serve",
      "--config",
      "fixtures/charter.yaml",
      "--listen",
      "127.0.0.1:0",
      "--data-dir",
      dataDir,
    ],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const address = new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /charter listening on (\S+)/.exec(err);
      if (m) resolve(m[1] as string);
    });
    child.on("exit", (code) =>
      reject(new Error(`charter serve exited with ${String(code)}: ${err}`)),
    );
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, address, stdout: () => out, exited };
}

describe("charter serve (the quick start's server, as a process)", () => {
  it("serves the demo, reloads on SIGHUP, logs one JSON line per call without tokens, and exits 0 on SIGTERM", async () => {
    expect(existsSync(BIN), "dist/ is missing: `npm test` builds it first (npm run build)").toBe(
      true,
    );
    const server = serve();
    const address = await server.address;
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

      server.child.kill("SIGHUP");
      await new Promise((r) => setTimeout(r, 300));
      expect((await clients.authority.authorize({ grantToken, call })).verdict?.decision).toBe(
        Decision.ALLOW,
      );
    } finally {
      clients.close();
    }
    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);

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
