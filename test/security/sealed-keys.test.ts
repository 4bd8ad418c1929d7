import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { startCharter } from "../../src/app/charter.js";
import { createAppContext } from "../../src/app/context.js";
import {
  DEFAULTS,
  isConfigError,
  resolveConfig,
  type CharterConfig,
} from "../../src/config/config.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { FIXTURES, startTestCharter } from "../support/charter-server.js";

// Signing keys encrypted at rest with a key-encryption key (AES-256-GCM): the store's bytes never
// hold the private key once a KEK is configured; without the KEK (or with another) start-up fails.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function temp(): string {
  const d = mkdtempSync(join(tmpdir(), "charter-kek-"));
  dirs.push(d);
  return d;
}

function kekFile(dir: string, name = "kek", mode = 0o600): string {
  const file = join(dir, name);
  writeFileSync(file, randomBytes(32).toString("base64"), { mode });
  chmodSync(file, mode);
  return file;
}

/** Every byte the data dir holds, for grepping as an attacker would. */
function allBytes(dataDir: string): string {
  return readdirSync(dataDir)
    .map((f) => readFileSync(join(dataDir, f)).toString("latin1"))
    .join("");
}

/** The private scalar `d` of each stored key, read in clear (what an attacker would grep for). */
async function privateScalars(config: CharterConfig): Promise<string[]> {
  const ctx = await createAppContext(config);
  try {
    const raw = await ctx.store.listKeys();
    return raw.map((k) => k.privateJwk);
  } finally {
    await ctx.close();
  }
}

const base = (dataDir: string): CharterConfig => ({
  ...DEFAULTS,
  listen: "127.0.0.1:0",
  dataDir,
  catalog: join(FIXTURES, "catalog.yaml"),
  policy: join(FIXTURES, "policy.yaml"),
  logLevel: "silent",
});
const search = (grantToken: string) => ({
  grantToken,
  call: { callId: "c", toolName: "web_search", argumentsJson: '{"query":"q"}' },
});

describe("signing keys sealed with a key-encryption key", () => {
  it("seals keys stored in clear before, leaves no private key in the files, and keeps old tokens verifying", async () => {
    const dir = temp();
    const dataDir = join(dir, "data");
    const plain = await startTestCharter({ dataDir });
    const { grantToken } = await plain.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "a",
      owner: "o",
      purpose: "p",
    });
    await plain.stop({ keepData: true });
    const [clear] = await privateScalars(base(dataDir));
    const d = (JSON.parse(clear ?? "{}") as { d?: string }).d ?? "";
    expect(d).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(allBytes(dataDir)).toContain(d);

    const kek = kekFile(dir);
    const sealed = await startTestCharter({ dataDir, config: { kekFile: kek } });
    // Already while it runs: neither the database file nor its WAL holds the old bytes.
    expect(allBytes(dataDir)).not.toContain(d);
    expect((await sealed.clients.authority.authorize(search(grantToken))).verdict?.decision).toBe(
      Decision.ALLOW,
    );
    const fresh = await sealed.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "a",
      owner: "o",
      purpose: "p",
    });
    await sealed.stop({ keepData: true });
    expect(allBytes(dataDir)).not.toContain(d);
    const stored = await privateScalars({ ...base(dataDir), kekFile: kek });
    expect(stored.every((s) => s.startsWith('{"sealed":"A256GCM"'))).toBe(true);

    const again = await startTestCharter({ dataDir, config: { kekFile: kek } });
    try {
      expect(
        (await again.clients.authority.authorize(search(fresh.grantToken))).verdict?.decision,
      ).toBe(Decision.ALLOW);
    } finally {
      await again.stop({ keepData: true });
    }
  });

  it("refuses to start without the KEK, or with another one, naming what to configure", async () => {
    const dir = temp();
    const dataDir = join(dir, "data");
    const kek = kekFile(dir);
    const first = await startTestCharter({ dataDir, config: { kekFile: kek } });
    await first.stop({ keepData: true });
    const log = pino({ level: "silent" });
    const without = await startCharter(base(dataDir), { log }).catch((e: unknown) => e);
    expect(isConfigError(without)).toBe(true);
    expect((without as Error).message).toMatch(
      /is encrypted at rest: configure its key-encryption key \(kekFile or CHARTER_KEK\)/,
    );
    const other = await startCharter(
      { ...base(dataDir), kek: randomBytes(32).toString("hex") },
      { log },
    ).catch((e: unknown) => e);
    expect(isConfigError(other)).toBe(true);
    expect((other as Error).message).toMatch(
      /was sealed with key-encryption key [0-9a-f]{16}, not the configured [0-9a-f]{16}/,
    );
  });

  it("refuses a KEK file other users can read, and a KEK that is not 32 bytes", async () => {
    const dir = temp();
    const open = kekFile(dir, "open-kek", 0o644);
    await expect(
      startCharter(
        { ...base(join(dir, "data")), kekFile: open },
        { log: pino({ level: "silent" }) },
      ),
    ).rejects.toThrow(
      `key-encryption key file ${open} is readable by other users (mode 0644): chmod 600 ${open}`,
    );
    await expect(
      startCharter(
        { ...base(join(dir, "data2")), kek: "c2hvcnQ=" },
        { log: pino({ level: "silent" }) },
      ),
    ).rejects.toThrow(/must be 32 bytes/);
  });
});

describe("configuration of the KEK", () => {
  it("takes the KEK from the environment only, never from a config file", async () => {
    const dir = temp();
    const file = join(dir, "charter.yaml");
    writeFileSync(file, "catalog: c.yaml\npolicy: p.yaml\nkek: abc\n");
    await expect(resolveConfig({ file, env: {} })).rejects.toThrow(
      '"kek" is a secret; set CHARTER_KEK or kekFile instead',
    );
    const config = await resolveConfig({
      env: { CHARTER_CATALOG: "c", CHARTER_POLICY: "p", CHARTER_KEK: "k" },
    });
    expect(config.kek).toBe("k");
  });

  it("requires a KEK for a postgres:// database (signing keys on a shared store are sealed)", async () => {
    const dir = temp();
    const file = join(dir, "charter.yaml");
    // `database` is the PostgreSQL adapter's setting (another branch): the rule is in place for it.
    const { requiresKek } = await import("../../src/config/config.js");
    expect(requiresKek("postgres://u@db/charter")).toBe(true);
    expect(requiresKek("postgresql://db/charter")).toBe(true);
    expect(requiresKek("sqlite:/var/lib/charter.db")).toBe(false);
    writeFileSync(file, "catalog: c.yaml\npolicy: p.yaml\n");
    await expect(resolveConfig({ file, env: {} })).resolves.toBeDefined();
  });
});
