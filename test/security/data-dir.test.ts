import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { runCli } from "../../src/cli/main.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";

// Keys nobody else can read: the data dir is 0700 and every store file 0600, checked by reading
// each file as an unprivileged user; a data dir or store file others can read, or one Charter
// cannot write, is refused at start (exit 78) with the path and the fix.

const ROOT = new URL("../../", import.meta.url).pathname;
const BIN = join(ROOT, "dist", "cli", "bin.js");
const NOBODY = spawnSync("runuser", ["-u", "nobody", "--", "true"]).status === 0;

const bases: string[] = [];
const running: TestCharter[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop({ keepData: true });
  for (const b of bases.splice(0)) rmSync(b, { recursive: true, force: true });
});

/** A directory everyone may traverse (as /var/lib is), so only the data dir's own modes protect it. */
function openBase(): string {
  const base = mkdtempSync(join(tmpdir(), "charter-perm-"));
  chmodSync(base, 0o755);
  bases.push(base);
  return base;
}

/** Whether the unprivileged user `nobody` can read `file`. */
function nobodyReads(file: string): boolean {
  return (
    spawnSync("runuser", [
      "-u",
      "nobody",
      "--",
      process.execPath,
      "-e",
      "require('fs').readFileSync(process.argv[1])",
      file,
    ]).status === 0
  );
}

const mode = (path: string) => statSync(path).mode & 0o777;

async function serveCli(dataDir: string): Promise<{ code: number; err: string }> {
  let err = "";
  const io: CliIo = { env: {}, out: () => undefined, err: (t) => (err += `${t}\n`) };
  const code = await runCli(
    [
      "serve",
      "--listen",
      "127.0.0.1:0",
      "--data-dir",
      dataDir,
      "--catalog",
      join(FIXTURES, "catalog.yaml"),
      "--policy",
      join(FIXTURES, "policy.yaml"),
      "--log-level",
      "silent",
    ],
    io,
  );
  return { code, err };
}

describe("the data dir", () => {
  it("is created 0700 with every store file 0600 (WAL and shared memory included)", async () => {
    const dataDir = join(openBase(), "data");
    const charter = await startTestCharter({ dataDir });
    running.push(charter);
    const { grantToken } = await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "a",
      owner: "o",
      purpose: "p",
    });
    const { verdict } = await charter.clients.authority.authorize({
      grantToken,
      call: { callId: "c", toolName: "web_search", argumentsJson: '{"query":"q"}' },
    });
    expect(verdict?.decision).toBe(Decision.ALLOW);
    expect(mode(dataDir)).toBe(0o700);
    const files = readdirSync(dataDir);
    expect(files).toEqual(
      expect.arrayContaining(["charter.db", "charter.db-wal", "charter.db-shm"]),
    );
    for (const f of files) expect([f, mode(join(dataDir, f))]).toEqual([f, 0o600]);
  });

  it.runIf(NOBODY)(
    "cannot be read by another user: not one file of it, even with the directory opened up",
    async () => {
      const dataDir = join(openBase(), "data");
      const charter = await startTestCharter({ dataDir });
      running.push(charter);
      await charter.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "a",
        owner: "o",
        purpose: "p",
      });
      const files = readdirSync(dataDir).map((f) => join(dataDir, f));
      expect(files.length).toBeGreaterThanOrEqual(3);
      for (const f of files) expect([f, nobodyReads(f)]).toEqual([f, false]);
      // With the directory opened, the files' own modes still keep the keys in.
      chmodSync(dataDir, 0o755);
      for (const f of files) expect([f, nobodyReads(f)]).toEqual([f, false]);
      // The check can succeed: a file others may read is read.
      const control = join(dataDir, "control.txt");
      writeFileSync(control, "x", { mode: 0o644 });
      expect(nobodyReads(control)).toBe(true);
    },
  );

  it("is refused at start when other users can get in, naming it and the fix (exit 78)", async () => {
    const dataDir = join(openBase(), "data");
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    const r = await serveCli(dataDir);
    expect(r.code).toBe(78);
    expect(r.err).toContain(`data dir ${dataDir} is open to other users (mode 0755)`);
    expect(r.err).toContain(`chmod 700 ${dataDir}`);
    expect(existsSync(join(dataDir, "charter.db"))).toBe(false);
  });

  it("is refused at start when a store file in it is world-readable", async () => {
    const dataDir = join(openBase(), "data");
    const first = await startTestCharter({ dataDir });
    await first.stop({ keepData: true });
    chmodSync(join(dataDir, "charter.db"), 0o644);
    const r = await serveCli(dataDir);
    expect(r.code).toBe(78);
    expect(r.err).toContain(
      `store file ${join(dataDir, "charter.db")} is readable by other users (mode 0644)`,
    );
    expect(r.err).toContain("chmod 600");
  });

  it.runIf(NOBODY)(
    "is refused at start when it cannot be written, with a clear message and exit 78",
    () => {
      expect(existsSync(BIN), "dist/ is missing: build it first (npm run build)").toBe(true);
      const base = openBase();
      const dataDir = join(base, "data");
      mkdirSync(dataDir, { mode: 0o500 });
      chmodSync(dataDir, 0o500);
      chownSync(dataDir, 65534, 65534);
      const copy = (f: string) => {
        writeFileSync(join(base, f), readFileSync(join(FIXTURES, f)));
        return join(base, f);
      };
      const result = spawnSync(
        "runuser",
        [
          "-u",
          "nobody",
          "--",
          process.execPath,
          BIN,
          "serve",
          "--listen",
          "127.0.0.1:0",
          "--data-dir",
          dataDir,
          "--catalog",
          copy("catalog.yaml"),
          "--policy",
          copy("policy.yaml"),
        ],
        {
          encoding: "utf8",
          timeout: 20_000,
        },
      );
      expect(result.status).toBe(78);
      expect(result.stderr).toContain(`data dir ${dataDir} cannot be written`);
    },
  );
});

describe("openssl and runuser", () => {
  it("are available, so the permission and TLS tests above ran", () => {
    expect(NOBODY).toBe(true);
    expect(() => execFileSync("openssl", ["version"])).not.toThrow();
  });
});
