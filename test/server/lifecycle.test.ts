import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { startCharter } from "../../src/app/charter.js";
import { DEFAULTS, type CharterConfig } from "../../src/config/config.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";

const running: TestCharter[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "charter-life-"));
  dirs.push(dir);
  return dir;
}

async function start(options: Parameters<typeof startTestCharter>[0] = {}): Promise<TestCharter> {
  const charter = await startTestCharter(options);
  running.push(charter);
  return charter;
}

const search = (grantToken: string) =>
  ({
    grantToken,
    call: {
      callId: "c",
      toolName: "web_search",
      argumentsJson: JSON.stringify({ query: "charter" }),
    },
  }) as const;

describe("restart with the same data dir", () => {
  it("keeps the signing key (old tokens verify) and the issued grants", async () => {
    const dataDir = tempDir();
    const first = await startTestCharter({ dataDir });
    const issued = await first.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "a",
      owner: "o",
      purpose: "p",
    });
    const jwksBefore = (await first.clients.keys.getJwks({})).jwksJson;
    await first.stop({ keepData: true });

    const second = await start({ dataDir });
    expect((await second.clients.keys.getJwks({})).jwksJson).toBe(jwksBefore);
    const { verdict } = await second.clients.authority.authorize(search(issued.grantToken));
    expect(verdict?.decision).toBe(Decision.ALLOW);
    const got = await second.clients.grants.getGrant({ grantId: issued.grant?.id ?? "" });
    expect(got.grant?.id).toBe(issued.grant?.id);
  });
});

describe("reloading catalog and policy", () => {
  it("serves the new policy after a good reload, and keeps the old one after a bad reload", async () => {
    const dir = tempDir();
    const policy = join(dir, "policy.yaml");
    copyFileSync(join(FIXTURES, "policy.yaml"), policy);
    const charter = await start({ config: { policy } });
    const issue = () =>
      charter.clients.grants.issueGrant({
        profile: "reviewer",
        subject: "a",
        owner: "o",
        purpose: "p",
      });
    await expect(issue()).rejects.toMatchObject({ code: 3 });

    writeFileSync(policy, "version: broken\nsources: [this is not a map]\n");
    await expect(charter.server.reload()).rejects.toThrow(/`sources` must be a map/);
    await expect(
      charter.clients.grants.issueGrant({
        profile: "receptionist",
        subject: "a",
        owner: "o",
        purpose: "p",
      }),
    ).resolves.toBeDefined();

    writeFileSync(
      policy,
      "version: v2\nsources:\n  read-only:\n    allow: [web.search]\nprofiles:\n  reviewer:\n    sources: [read-only]\n",
    );
    await charter.server.reload();
    const issued = await issue();
    expect(issued.grant?.allowed).toEqual(["web.search"]);
    await expect(
      charter.clients.grants.issueGrant({
        profile: "receptionist",
        subject: "a",
        owner: "o",
        purpose: "p",
      }),
    ).rejects.toMatchObject({
      code: 3,
    });
  });
});

describe("start-up", () => {
  const base = (): CharterConfig => ({
    ...DEFAULTS,
    listen: "127.0.0.1:0",
    dataDir: tempDir(),
    catalog: join(FIXTURES, "catalog.yaml"),
    policy: join(FIXTURES, "policy.yaml"),
    createStore: "if-missing",
  });
  const log = pino({ level: "silent" });

  it.each(["0.0.0.0:0", "192.0.2.10:50051", "[::]:0"])(
    "refuses to listen on the non-loopback address %s, saying why",
    async (listen) => {
      await expect(startCharter({ ...base(), listen }, { log })).rejects.toThrow(
        /only on loopback/,
      );
    },
  );

  it("fails fast naming a missing catalog file", async () => {
    await expect(
      startCharter({ ...base(), catalog: "/nonexistent/catalog.yaml" }, { log }),
    ).rejects.toThrow("/nonexistent/catalog.yaml: cannot read: file not found");
  });

  it("fails fast naming the policy problem", async () => {
    const policy = join(tempDir(), "bad-policy.yaml");
    writeFileSync(
      policy,
      "version: x\nsources:\n  s:\n    allow: [no.such.action]\nprofiles: {}\n",
    );
    await expect(startCharter({ ...base(), policy }, { log })).rejects.toThrow(
      `${policy}: source s allow: names action "no.such.action", which the catalog lacks`,
    );
  });
});

describe("shutdown", () => {
  it("lets a call already in flight finish (store still open) before the store closes", async () => {
    // The clock is read inside the Authorize handler: the first read after arming starts the stop,
    // so the stop provably begins while the call is in flight.
    let armed = false;
    let stopping: Promise<void> | undefined;
    const charter = await startTestCharter({
      now: () => {
        if (armed) {
          armed = false;
          stopping = charter.server.stop(5_000);
        }
        return Math.floor(Date.now() / 1000);
      },
    });
    const { grantToken } = await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "a",
      owner: "o",
      purpose: "p",
    });
    armed = true;
    const items = Array.from({ length: 50 }, (_, i) => ({
      call: { callId: `c${i}`, toolName: "web_search", argumentsJson: '{"query":"q"}' },
    }));
    const { verdicts } = await charter.clients.authority.batchAuthorize({ grantToken, items });
    expect(stopping).toBeDefined();
    expect(verdicts).toHaveLength(50);
    expect(verdicts.every((v) => v.decision === Decision.ALLOW)).toBe(true);
    await stopping;
    await expect(charter.clients.keys.getJwks({}, { timeoutMs: 2_000 })).rejects.toMatchObject({
      code: 14,
    });
    charter.clients.close();
    rmSync(charter.dataDir, { recursive: true, force: true });
  });

  it("stops serving: later calls fail with UNAVAILABLE", async () => {
    const charter = await startTestCharter();
    const address = charter.server.port;
    await charter.server.stop(1_000);
    const { createCharterClients } = await import("../../src/client/index.js");
    const clients = createCharterClients({ address: `127.0.0.1:${address}` });
    await expect(clients.keys.getJwks({}, { timeoutMs: 2_000 })).rejects.toMatchObject({
      code: 14,
    });
    clients.close();
    charter.clients.close();
    rmSync(charter.dataDir, { recursive: true, force: true });
  });
});
