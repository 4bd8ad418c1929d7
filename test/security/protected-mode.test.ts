import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createAppContext } from "../../src/app/context.js";
import { isLoopbackAddress, planListen } from "../../src/app/listen.js";
import { createApiKey, revokeApiKey } from "../../src/authority/index.js";
import { createCharterClients } from "../../src/client/index.js";
import { DEFAULTS, type CharterConfig } from "../../src/config/config.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";

const running: TestCharter[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function config(overrides: Partial<CharterConfig> = {}): CharterConfig {
  const dataDir = mkdtempSync(join(tmpdir(), "charter-protected-"));
  dirs.push(dataDir);
  return {
    ...DEFAULTS,
    listen: "127.0.0.1:0",
    dataDir,
    catalog: join(FIXTURES, "catalog.yaml"),
    policy: join(FIXTURES, "policy.yaml"),
    logLevel: "silent",
    ...overrides,
  };
}

/** Creates an API key on a data dir offline, as `charter keys create` does. */
async function keyOffline(
  c: CharterConfig,
  roles: string[],
): Promise<{ id: string; secret: string }> {
  const ctx = await createAppContext(c);
  try {
    const { key, secret } = await createApiKey(ctx, { principal: "ops", roles });
    return { id: key.id, secret };
  } finally {
    await ctx.close();
  }
}

async function start(c: CharterConfig, lines?: string[]): Promise<TestCharter> {
  const log = lines
    ? pino({ level: "info" }, { write: (l: string) => void lines.push(l) })
    : undefined;
  const charter = await startTestCharter({
    config: c,
    dataDir: c.dataDir,
    ...(log ? { log } : {}),
  });
  running.push(charter);
  return charter;
}

const issue = {
  profile: "owner-assistant",
  subject: "agent:a",
  owner: "ana@example.com",
  purpose: "p",
};

describe("protected mode (no API key, no mutual TLS)", () => {
  it.each(["0.0.0.0:0", "[::]:0", "[::ffff:0.0.0.0]:0", "192.0.2.10:50051"])(
    "refuses to listen on %s, saying why and how to leave protected mode",
    async (listen) => {
      await expect(start(config({ listen }))).rejects.toThrow(
        /only on loopback.*charter keys create.*tlsClientCa/s,
      );
    },
  );

  it("serves a name that resolves to loopback only, on the resolved addresses, and says it is in protected mode", async () => {
    const lines: string[] = [];
    const charter = await start(config({ listen: "localhost:0", logLevel: "info" }), lines);
    const plan = await planListen("localhost:0");
    expect(plan.loopbackOnly).toBe(true);
    expect(lines.some((l) => l.includes("protected mode"))).toBe(true);
    const serving = JSON.parse(lines.find((l) => l.includes('"charter serving"')) ?? "{}") as {
      addresses?: string[];
    };
    expect(serving.addresses).toEqual(plan.addresses);
    await expect(charter.clients.grants.issueGrant(issue)).resolves.toBeDefined();
  });

  it("ends at once when the first API key is created while the server runs", async () => {
    const charter = await start(config());
    await expect(charter.clients.grants.issueGrant(issue)).resolves.toBeDefined();
    const { secret } = await createApiKey(charter.server.context, {
      principal: "ops",
      roles: ["issuer"],
    });
    await expect(charter.clients.grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
    });
    await expect(
      charter.clients.grants.issueGrant(issue, { metadata: { authorization: `Bearer ${secret}` } }),
    ).resolves.toBeDefined();
  });
});

/** The log lines at warn, parsed. */
function warnings(lines: readonly string[]): { msg: string; level: number }[] {
  return lines
    .map((l) => JSON.parse(l) as { msg: string; level: number })
    .filter((l) => l.level === 40);
}

describe("auth: none — protected mode is a choice, and the first key ends it for good", () => {
  it("leaves anonymous callers UNAUTHENTICATED after the last key is revoked, also after a restart", async () => {
    const c = config({ auth: "none" });
    const lines: string[] = [];
    const charter = await start(c, lines);
    await expect(charter.clients.grants.issueGrant(issue)).resolves.toBeDefined();
    const { key } = await createApiKey(charter.server.context, {
      principal: "ops",
      roles: ["issuer"],
    });
    await expect(charter.clients.grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
    });
    await revokeApiKey(charter.server.context, key.id);
    await new Promise((r) => setImmediate(r));
    await expect(charter.clients.grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
    });
    expect(warnings(lines).map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/^protected mode ended: /),
    );
    await charter.stop({ keepData: true });
    running.splice(running.indexOf(charter), 1);

    const again: string[] = [];
    const restarted = await start(c, again);
    await expect(restarted.clients.grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
    });
    expect(warnings(again).map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/protected mode ended when this store's first API key was created/),
    );
  });

  it("ends protected mode with a key created offline before the server ever started", async () => {
    const c = config({ auth: "none" });
    const { id } = await keyOffline(c, ["issuer"]);
    const ctx = await createAppContext(c);
    await revokeApiKey(ctx, id);
    await ctx.close();
    const charter = await start(c);
    await expect(charter.clients.grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
    });
  });

  it("says at start, at warn, that anonymous local callers act as admin", async () => {
    const lines: string[] = [];
    await start(config({ auth: "none" }), lines);
    expect(warnings(lines).map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/^auth: none — protected mode, anonymous local callers act as admin/),
    );
  });

  it.each(["0.0.0.0:0", "192.0.2.10:50051"])(
    "is refused at start on %s, a non-loopback address",
    async (listen) => {
      const c = config({ auth: "none", listen });
      await keyOffline(c, ["issuer"]);
      await expect(start(c)).rejects.toThrow(
        /auth: none .*allowed only on a loopback listen address without tlsClientCa/,
      );
    },
  );
});

describe("auth: keys", () => {
  it("refuses anonymous callers with no key in the store, saying how to create one", async () => {
    const lines: string[] = [];
    const charter = await start(config({ auth: "keys" }), lines);
    await expect(charter.clients.grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
      details: expect.stringContaining("charter keys create") as unknown,
    });
    expect(warnings(lines).map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/^auth: keys and no API key exists.*charter keys create/),
    );
  });

  it("logs a change of mode between two starts at warn", async () => {
    const c = config({ auth: "none" });
    const charter = await start(c);
    await charter.stop({ keepData: true });
    running.splice(running.indexOf(charter), 1);
    const lines: string[] = [];
    await start({ ...c, auth: "keys" }, lines);
    expect(warnings(lines).map((l) => l.msg)).toContainEqual(
      "auth mode changed since this store was last served: none -> keys",
    );
  });
});

describe("with an API key configured", () => {
  it("listens on every interface, and a caller without the key is UNAUTHENTICATED", async () => {
    const c = config({ listen: "0.0.0.0:0" });
    const { secret } = await keyOffline(c, ["issuer"]);
    const charter = await start(c);
    await expect(charter.clients.grants.issueGrant(issue)).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
    });
    await expect(
      charter.clients.grants.issueGrant(issue, { metadata: { authorization: `Bearer ${secret}` } }),
    ).resolves.toBeDefined();
  });

  it("does not fall back to protected mode on a non-loopback address when the last key is revoked", async () => {
    const c = config({ listen: "0.0.0.0:0" });
    const { id } = await keyOffline(c, ["issuer"]);
    const charter = await start(c);
    await revokeApiKey(charter.server.context, id);
    const clients = createCharterClients({ address: `127.0.0.1:${charter.server.port}` });
    try {
      await expect(clients.grants.issueGrant(issue)).rejects.toMatchObject({
        code: status.UNAUTHENTICATED,
      });
    } finally {
      clients.close();
    }
  });
});

describe("isLoopbackAddress()", () => {
  it.each(["127.0.0.1", "127.255.0.9", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"])(
    "%s is loopback",
    (a) => expect(isLoopbackAddress(a)).toBe(true),
  );
  it.each([
    "0.0.0.0",
    "::",
    "::ffff:0.0.0.0",
    "10.0.0.1",
    "192.0.2.10",
    "fe80::1",
    "::2",
    "localhost",
  ])("%s is not", (a) => expect(isLoopbackAddress(a)).toBe(false));
});
