import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import Database from "better-sqlite3";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createCharterClients } from "../../src/client/index.js";
import { openStore } from "../../src/store/index.js";
import { runCapture } from "../support/cli.js";
import { describePostgres, testSchema } from "../support/postgres.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { ServeExited, serveProcess, type ServedProcess } from "../support/serve-process.js";

// Store identity (issue 22, finding 11): a store that vanished, was replaced by another Charter
// store or is not Charter's is refused at start unless told to start anew (`charter init`), and a
// store overwritten in place while serving fails every call UNAVAILABLE.

const ROOT = new URL("../../", import.meta.url).pathname;
const dirs: string[] = [];
const running: TestCharter[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "charter-identity-"));
  dirs.push(d);
  return d;
}

const issue = { profile: "owner-assistant", subject: "a", owner: "o", purpose: "p" };

interface Served {
  readonly code: number | null;
  readonly stderr: string;
  readonly stdout: string;
}

/**
 * `charter serve` as the quick start runs it (fixtures/charter.yaml), on an ephemeral port: once
 * it listens, one IssueGrant, then SIGTERM. Answers how it exited and what it printed.
 */
async function serve(
  dataDir: string,
  extra: readonly string[] = [],
  config = "fixtures/charter.yaml",
): Promise<Served> {
  let served: ServedProcess;
  try {
    served = await serveProcess({
      config,
      dataDir,
      args: extra,
      env: { CHARTER_WORKERS: "1" },
      keepStdout: true,
    });
  } catch (err) {
    if (err instanceof ServeExited)
      return { code: err.code, stderr: err.stderr, stdout: err.stdout };
    throw err;
  }
  const clients = createCharterClients({ address: served.address });
  let said: string;
  try {
    await clients.grants.issueGrant(issue);
    said = "ISSUED";
  } catch (err) {
    said = `REFUSED ${(err as Error).message}`;
  } finally {
    clients.close();
  }
  served.signal("SIGTERM");
  const { code } = await served.exited;
  return { code, stderr: `${served.stderr()}\n${said}\n`, stdout: served.stdout() };
}

function removeStore(dataDir: string): void {
  for (const f of ["charter.db", "charter.db-wal", "charter.db-shm"])
    rmSync(join(dataDir, f), { force: true });
}

describe("store identity at start (charter serve as a process)", { timeout: 60_000 }, () => {
  it("starts the quick start on a fresh data dir in one command, and records the store id beside the store (0600)", async () => {
    const dataDir = join(tempDir(), "fresh"); // not even the directory exists
    const first = await serve(dataDir);
    expect(first.stderr).toContain("ISSUED");
    expect(first.code).toBe(0);
    const idFile = join(dataDir, "charter.db.id");
    expect(readFileSync(idFile, "utf8").trim()).toMatch(/^[0-9a-f]{32}$/);
    expect(statSync(idFile).mode & 0o777).toBe(0o600);
    const db = new Database(join(dataDir, "charter.db"), { readonly: true });
    try {
      expect(db.pragma("application_id", { simple: true })).toBe(0x43485254);
      expect(
        (
          db.prepare("SELECT value FROM store_meta WHERE name = 'store_id'").get() as {
            value: string;
          }
        ).value,
      ).toBe(readFileSync(idFile, "utf8").trim());
    } finally {
      db.close();
    }
    // A restart serves the same store.
    expect((await serve(dataDir)).stderr).toContain("ISSUED");
  });

  it("refuses a store deleted since the last start, saying how to start anew; `charter init` then serve works", async () => {
    const dataDir = tempDir();
    expect((await serve(dataDir)).code).toBe(0);
    const id = readFileSync(join(dataDir, "charter.db.id"), "utf8").trim();
    removeStore(dataDir);
    const refused = await serve(dataDir);
    expect(refused.code).toBe(78);
    expect(refused.stderr).toContain(`says store ${id} was there`);
    expect(refused.stderr).toContain("charter init");
    expect(existsSync(join(dataDir, "charter.db"))).toBe(false);

    const init = await runCapture([
      "init",
      "--config",
      join(ROOT, "fixtures/charter.yaml"),
      "--data-dir",
      dataDir,
    ]);
    expect(init.code).toBe(0);
    expect(init.err).toContain(`store ${id} is gone; starting anew`);
    const newId = readFileSync(join(dataDir, "charter.db.id"), "utf8").trim();
    expect(newId).not.toBe(id);
    expect((await serve(dataDir)).stderr).toContain("ISSUED");
    // init refuses to overwrite a store that is there.
    const again = await runCapture([
      "init",
      "--config",
      join(ROOT, "fixtures/charter.yaml"),
      "--data-dir",
      dataDir,
    ]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("a store is there already");
  });

  it("refuses a store replaced by another Charter store", async () => {
    const dataDir = tempDir();
    const other = tempDir();
    expect((await serve(dataDir)).code).toBe(0);
    expect((await serve(other)).code).toBe(0);
    removeStore(dataDir);
    copyFileSync(join(other, "charter.db"), join(dataDir, "charter.db"));
    const refused = await serve(dataDir);
    expect(refused.code).toBe(78);
    expect(refused.stderr).toMatch(/is not the store this data dir was serving/);
    expect(refused.stderr).toContain("charter init");
  });

  it("creates no store on a fresh data dir unless told: createStore unset refuses, --init creates", async () => {
    const dir = tempDir();
    const config = join(dir, "charter.yaml");
    writeFileSync(
      config,
      readFileSync(join(ROOT, "fixtures/charter.yaml"), "utf8").replace(/^createStore:.*$/m, ""),
    );
    const dataDir = join(dir, "data");
    const refused = await serve(dataDir, [], config);
    expect(refused.code).toBe(78);
    expect(refused.stderr).toMatch(/there is no store at .*charter init.*serve --init/);
    expect(existsSync(join(dataDir, "charter.db"))).toBe(false);
    expect((await serve(dataDir, ["--init"], config)).stderr).toContain("ISSUED");
  });

  it("refuses a SQLite file that is not Charter's and leaves it as it was", async () => {
    const dataDir = tempDir();
    const file = join(dataDir, "charter.db");
    const foreign = new Database(file);
    foreign.pragma("application_id = 42");
    foreign.exec("CREATE TABLE notes (t TEXT)");
    foreign.close();
    chmodSync(file, 0o600);
    const before = readFileSync(file);
    await expect(
      startTestCharter({ dataDir, log: pino({ level: "silent" }) }).then((c) => running.push(c)),
    ).rejects.toThrow(/is not a Charter store \(its SQLite application_id is 42/);
    expect(readFileSync(file).equals(before)).toBe(true);
  });
});

describe("protected mode across restarts (charter serve as a process)", { timeout: 60_000 }, () => {
  it("stays ended after the only key, created and revoked with the CLI, is gone", async () => {
    const dataDir = tempDir();
    const config = join(ROOT, "fixtures/charter.yaml");
    expect((await serve(dataDir)).stderr).toContain("ISSUED");
    const created = await runCapture([
      "keys",
      "create",
      "--config",
      config,
      "--data-dir",
      dataDir,
      "--principal",
      "ops",
      "--role",
      "admin",
    ]);
    expect(created.code).toBe(0);
    const id = /created (key_\w+)/.exec(created.err)?.[1] ?? "";
    const revoked = await runCapture([
      "keys",
      "revoke",
      id,
      "--config",
      config,
      "--data-dir",
      dataDir,
    ]);
    expect(revoked.code).toBe(0);
    const after = await serve(dataDir);
    expect(after.stderr).toMatch(/REFUSED 16 UNAUTHENTICATED/);
    expect(after.stdout).toContain(
      "protected mode ended when this store's first API key was created",
    );
  });
});

describe("a store overwritten in place while serving", () => {
  it("fails every call UNAVAILABLE and logs it at error", async () => {
    const lines: string[] = [];
    const charter = await startTestCharter({
      log: pino({ level: "info" }, { write: (l: string) => void lines.push(l) }),
    });
    running.push(charter);
    const other = await startTestCharter();
    const otherBytes = readFileSync(join(other.dataDir, "charter.db"));
    await other.stop();
    await expect(charter.clients.grants.issueGrant(issue)).resolves.toBeDefined();
    // Same inode, no truncation (dd conv=notrunc): another Charter store's bytes over this one's.
    const fd = openSync(join(charter.dataDir, "charter.db"), "r+");
    writeSync(fd, otherBytes, 0, otherBytes.length, 0);
    closeSync(fd);
    await new Promise((r) => setImmediate(r));
    await expect(charter.clients.grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.UNAVAILABLE,
    });
    await expect(charter.clients.keys.getJwks({})).rejects.toMatchObject({
      code: status.UNAVAILABLE,
    });
    const errors = lines.map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(errors).toContainEqual(
      expect.objectContaining({
        level: 50,
        msg: expect.stringContaining("the store is no longer the one opened") as unknown,
      }),
    );
  });
});

describePostgres("store identity on PostgreSQL", () => {
  it("refuses a database whose store id is not the data dir's id file, and leaves the id file as it was", async () => {
    const dataDir = tempDir();
    const a = testSchema("identity_a");
    const b = testSchema("identity_b");
    try {
      await (await openStore({ dataDir, url: a.url })).close();
      const id = readFileSync(join(dataDir, "charter.db.id"), "utf8").trim();
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      await (await openStore({ dataDir, url: a.url })).close();
      await expect(openStore({ dataDir, url: b.url })).rejects.toThrow(
        new RegExp(
          `is not the store this data dir was serving: its id is \\(none\\), .* says ${id}`,
        ),
      );
      expect(readFileSync(join(dataDir, "charter.db.id"), "utf8").trim()).toBe(id);
    } finally {
      await a.drop();
      await b.drop();
    }
  });
});
