import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EXIT_RPC_FAILED } from "../../src/cli/target.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";
import { runCapture, type CliRun } from "../support/cli.js";

const dirs: string[] = [];
const running: TestCharter[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop({ keepData: true });
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "charter-cli-keys-"));
  dirs.push(dir);
  return dir;
}

const cli = (dir: string, args: string[], env: Record<string, string> = {}): Promise<CliRun> =>
  runCapture(args, {
    CHARTER_CATALOG: join(FIXTURES, "catalog.yaml"),
    CHARTER_POLICY: join(FIXTURES, "policy.yaml"),
    CHARTER_DATA_DIR: dir,
    ...env,
  });

describe("charter keys", () => {
  it("creates a key (the secret printed once), lists it without the secret, and revokes it", async () => {
    const dir = dataDir();
    const created = await cli(dir, [
      "keys",
      "create",
      "--principal",
      "orchestrator",
      "--role",
      "issuer",
      "--role",
      "auditor",
    ]);
    expect(created.code).toBe(0);
    const secret = created.out.trim();
    expect(secret).toMatch(/^chk_[A-Za-z0-9_-]{43}$/);
    const id =
      /created (key_[0-9a-f]+) for orchestrator \(auditor, issuer\)/.exec(created.err)?.[1] ?? "";
    expect(id).not.toBe("");

    const listed = await cli(dir, ["keys", "list"]);
    expect(listed.out).toMatch(
      new RegExp(`^${id}\torchestrator\tauditor,issuer\t\\S+\tactive$`, "m"),
    );
    expect(listed.out).not.toContain(secret.slice(4));

    expect((await cli(dir, ["keys", "revoke", id])).out).toContain(`revoked ${id}`);
    expect((await cli(dir, ["keys", "list"])).out).toMatch(
      new RegExp(`^${id}\t.*\trevoked \\S+$`, "m"),
    );
    const again = await cli(dir, ["keys", "revoke", "key_nope"]);
    expect(again.code).toBe(EXIT_RPC_FAILED);
    expect(again.err).toContain('NOT_FOUND: no api key with id "key_nope"');
  });

  it("refuses an unknown role and a missing principal", async () => {
    const dir = dataDir();
    expect(
      (await cli(dir, ["keys", "create", "--principal", "x", "--role", "root"])).err,
    ).toContain('roles: unknown role "root"');
    expect((await cli(dir, ["keys", "create", "--role", "issuer"])).code).toBe(64);
  });

  it("refuses --server: there is no key-management RPC", async () => {
    const r = await cli(dataDir(), ["keys", "list", "--server", "127.0.0.1:1"]);
    expect(r.code).toBe(64);
    expect(r.err).toContain("no key-management RPC");
  });

  it("rotates the signing key offline; the running server signs with it after a reload, and old tokens still verify", async () => {
    const dir = dataDir();
    const charter = await startTestCharter({ dataDir: dir });
    running.push(charter);
    const before = await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "a",
      owner: "o",
      purpose: "p",
    });
    const rotated = await cli(dir, ["keys", "rotate-signing"]);
    expect(rotated.code).toBe(0);
    const kid = /^signing with (\S+)$/m.exec(rotated.out)?.[1] ?? "";
    await charter.server.reload();
    const jwks = JSON.parse((await charter.clients.keys.getJwks({})).jwksJson) as {
      keys: { kid: string }[];
    };
    expect(jwks.keys).toHaveLength(2);
    expect(jwks.keys.map((k) => k.kid)).toContain(kid);
    const after = await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "a",
      owner: "o",
      purpose: "p",
    });
    const header = JSON.parse(
      Buffer.from(after.grantToken.split(".")[0] ?? "", "base64url").toString(),
    ) as { kid: string };
    expect(header.kid).toBe(kid);
    const old = await charter.clients.authority.authorize({
      grantToken: before.grantToken,
      call: { callId: "c", toolName: "web_search", argumentsJson: '{"query":"q"}' },
    });
    expect(old.verdict?.reason?.code ?? "").toBe("");
  });

  it("sends --api-key (or CHARTER_API_KEY) to a server that requires one", async () => {
    const dir = dataDir();
    const secret = (
      await cli(dir, ["keys", "create", "--principal", "orchestrator", "--role", "issuer"])
    ).out.trim();
    const charter = await startTestCharter({ dataDir: dir });
    running.push(charter);
    const server = `127.0.0.1:${charter.server.port}`;
    const without = await cli(dir, ["issue", "--server", server, "--profile", "receptionist"]);
    expect(without.code).toBe(EXIT_RPC_FAILED);
    expect(without.err).toContain("UNAUTHENTICATED: a valid API key is required");
    expect(
      (
        await cli(dir, [
          "issue",
          "--server",
          server,
          "--api-key",
          secret,
          "--profile",
          "receptionist",
        ])
      ).code,
    ).toBe(0);
    expect(
      (
        await cli(dir, ["issue", "--server", server, "--profile", "receptionist"], {
          CHARTER_API_KEY: secret,
        })
      ).code,
    ).toBe(0);
  });
});
