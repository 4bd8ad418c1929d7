import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { runCli } from "../../src/cli/main.js";
import { createCharterClients } from "../../src/client/index.js";

// Crash safety on SQLite: `charter serve` killed with SIGKILL under load loses no audit record of
// any verdict a client received, and the chain still verifies.
const ROOT = new URL("../../", import.meta.url).pathname;
const BIN = join(ROOT, "dist", "cli", "bin.js");
const dataDir = mkdtempSync(join(tmpdir(), "charter-crash-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { env: {}, out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) };
  const code = await runCli([...args, "--config", join(ROOT, "fixtures", "charter.yaml"), "--data-dir", dataDir], io);
  return { code, out, err };
}

describe("crash safety (SQLite)", () => {
  it("every decision id a client received is in the audit log after SIGKILL, and audit verify passes", async () => {
    expect(existsSync(BIN), "dist/ is missing: `npm test` builds it first").toBe(true);
    const child = spawn(
      process.execPath,
      [BIN, "serve", "--config", "fixtures/charter.yaml", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--log-level", "silent"],
      {
        cwd: ROOT,
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    const address = await new Promise<string>((resolve, reject) => {
      let err = "";
      child.stderr.on("data", (d: Buffer) => {
        err += d.toString();
        const m = /charter listening on (\S+)/.exec(err);
        if (m) resolve(m[1] as string);
      });
      child.on("exit", (code) => reject(new Error(`charter serve exited with ${String(code)}: ${err}`)));
    });
    const clients = createCharterClients({ address });
    const received: string[] = [];
    try {
      const { grantToken } = await clients.grants.issueGrant({ profile: "owner-assistant", subject: "agent:load", owner: "ana@example.com", purpose: "crash" });
      let killed = false;
      const worker = async (w: number) => {
        for (let i = 0; !killed; i++) {
          try {
            const { verdict } = await clients.authority.authorize({
              grantToken,
              call: { callId: `w${w}-${i}`, toolName: i % 5 === 0 ? "run_shell" : "web_search", argumentsJson: JSON.stringify({ query: `q${i}`, command: "ls" }) },
            });
            if (verdict) received.push(verdict.decisionId);
          } catch {
            return; // the server is gone
          }
        }
      };
      const load = Promise.all(Array.from({ length: 16 }, (_, w) => worker(w)));
      while (received.length < 400) await new Promise((r) => setTimeout(r, 20));
      child.kill("SIGKILL");
      killed = true;
      await exited;
      await load;
    } finally {
      clients.close();
    }
    expect(received.length).toBeGreaterThanOrEqual(400);

    const verify = await cli("audit", "verify");
    expect(verify.out).toMatch(/^audit log ok: /);
    expect(verify.code).toBe(0);
    const file = join(dataDir, "export.jsonl");
    expect((await cli("audit", "export", "--out", file)).code).toBe(0);
    const logged = new Set(
      readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { entry: { decisionId?: string } }).entry.decisionId),
    );
    const lost = received.filter((id) => !logged.has(id));
    expect(lost).toEqual([]);
  });
});
