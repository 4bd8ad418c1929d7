import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter } from "../support/charter-server.js";
import { describePostgres, testSchema } from "../support/postgres.js";
import { expectDecisionsLogged } from "../support/audit-log.js";
import { runCapture, type CliRun } from "../support/cli.js";
import { serveProcess } from "../support/serve-process.js";

// Crash safety: `charter serve` killed with SIGKILL under load loses no audit record of any
// verdict a client received, and the chain still verifies — on SQLite, and on PostgreSQL with a
// second replica appending to the same chain while the first one dies.
const ROOT = new URL("../../", import.meta.url).pathname;

/** How a store is named on the command line and in the environment. */
interface StoreArgs {
  readonly dataDir: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

const cli = (store: StoreArgs, ...args: string[]): Promise<CliRun> =>
  runCapture(
    [
      ...args,
      "--config",
      join(ROOT, "fixtures", "charter.yaml"),
      "--data-dir",
      store.dataDir,
      ...store.args,
    ],
    store.env,
  );

/** Starts `charter serve` as a child process on `store`; SIGKILL is how it ends. */
async function serve(store: StoreArgs): Promise<{ address: string; kill: () => Promise<void> }> {
  const served = await serveProcess({
    dataDir: store.dataDir,
    args: ["--log-level", "silent", ...store.args],
    env: store.env,
  });
  return { address: served.address, kill: served.kill };
}

function load(
  clients: CharterClients,
  grantToken: string,
  tag: string,
  received: string[],
  stopped: () => boolean,
): Promise<void> {
  const worker = async (w: number) => {
    for (let i = 0; !stopped(); i++) {
      try {
        const { verdict } = await clients.authority.authorize({
          grantToken,
          call: {
            callId: `${tag}${w}-${i}`,
            toolName: i % 5 === 0 ? "run_shell" : "web_search",
            argumentsJson: JSON.stringify({ query: `q${i}`, command: "ls" }),
          },
        });
        if (verdict) received.push(verdict.decisionId);
      } catch {
        return; // the server is gone
      }
    }
  };
  return Promise.all(Array.from({ length: 16 }, (_, w) => worker(w))).then(() => undefined);
}

/** The chain verifies, and every decision id a client received is one of its records. */
const expectAllLogged = (store: StoreArgs, received: readonly string[]) =>
  expectDecisionsLogged((...args) => cli(store, ...args), store.dataDir, received);

describe("crash safety (SQLite)", () => {
  const store: StoreArgs = {
    dataDir: mkdtempSync(join(tmpdir(), "charter-crash-")),
    args: [],
    env: {},
  };
  afterAll(() => rmSync(store.dataDir, { recursive: true, force: true }));

  it("every decision id a client received is in the audit log after SIGKILL, and audit verify passes", async () => {
    const server = await serve(store);
    const clients = createCharterClients({ address: server.address });
    const received: string[] = [];
    try {
      const { grantToken } = await clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:load",
        owner: "ana@example.com",
        purpose: "crash",
      });
      let killed = false;
      const running = load(clients, grantToken, "w", received, () => killed);
      while (received.length < 400) await new Promise((r) => setTimeout(r, 20));
      await server.kill();
      killed = true;
      await running;
    } finally {
      clients.close();
    }
    expect(received.length).toBeGreaterThanOrEqual(400);
    await expectAllLogged(store, received);
  });
});

describePostgres("crash safety (PostgreSQL, two replicas on one chain)", () => {
  const schema = testSchema("crash");
  const kek = randomBytes(32).toString("base64");
  const store: StoreArgs = {
    dataDir: mkdtempSync(join(tmpdir(), "charter-crash-pg-")),
    args: ["--database", schema.url],
    env: { CHARTER_KEK: kek },
  };
  beforeAll(() => schema.create());
  afterAll(async () => {
    await schema.drop();
    rmSync(store.dataDir, { recursive: true, force: true });
  });

  it("a replica killed under load loses no record of a verdict it returned; the other keeps appending; audit verify passes", async () => {
    const killedReplica = await serve(store);
    const clients = createCharterClients({ address: killedReplica.address });
    // The second replica, in this process, on the same schema and KEK, under load the whole time.
    const survivor = await startTestCharter({
      config: { database: schema.url, kek, issuer: "charter-demo", audience: "charter-demo" },
    });
    const received: string[] = [];
    try {
      const { grantToken } = await clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:load",
        owner: "ana@example.com",
        purpose: "crash",
      });
      let killed = false;
      let done = false;
      const dying = load(clients, grantToken, "a", received, () => killed);
      const surviving = load(survivor.clients, grantToken, "b", received, () => done);
      while (received.length < 400) await new Promise((r) => setTimeout(r, 20));
      await killedReplica.kill();
      killed = true;
      await dying;
      const atKill = received.length;
      while (received.length < atKill + 100) await new Promise((r) => setTimeout(r, 20));
      done = true;
      await surviving;
    } finally {
      clients.close();
      await survivor.stop();
    }
    expect(received.length).toBeGreaterThanOrEqual(500);
    await expectAllLogged(store, received);
  }, 45_000); // two servers and a kill under load: on a busy machine, longer than 20 s
});

describe("crash safety of runs (SQLite)", () => {
  const store: StoreArgs = {
    dataDir: mkdtempSync(join(tmpdir(), "charter-crash-runs-")),
    args: [],
    env: {},
  };
  afterAll(() => rmSync(store.dataDir, { recursive: true, force: true }));

  const inRun = (runId: string, callId: string, toolName: string, args: unknown) => ({
    callId,
    toolName,
    argumentsJson: JSON.stringify(args),
    step: { runId, of: { case: "toolCallId" as const, value: callId } },
  });

  it("a SIGKILL loses no label of an answered allow: each such run still holds its next send", async () => {
    let server = await serve(store);
    let clients = createCharterClients({ address: server.address });
    const answered: string[] = [];
    let grantToken = "";
    try {
      ({ grantToken } = await clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:crash-runs",
        owner: "ana@example.com",
        purpose: "crash",
      }));
      let killed = false;
      const worker = async (w: number) => {
        for (let i = 0; !killed; i++) {
          const runId = `crash-${w}-${i}`;
          try {
            const { verdict } = await clients.authority.authorize({
              grantToken,
              call: inRun(runId, "read", "read_email", { message_id: "msg_7f3a9c21" }),
            });
            if (verdict?.decision === Decision.ALLOW) answered.push(runId);
          } catch {
            return; // the server is gone
          }
        }
      };
      const running = Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
      // The grant allows 60 calls of an action (maxCallsPerAction): kill well before they run out.
      while (answered.length < 30) await new Promise((r) => setTimeout(r, 5));
      await server.kill();
      killed = true;
      await running;
    } finally {
      clients.close();
    }
    server = await serve(store);
    clients = createCharterClients({ address: server.address });
    try {
      const held = await Promise.all(
        answered.map(async (runId) => {
          const { verdict } = await clients.authority.authorize({
            grantToken,
            call: inRun(runId, "send", "send_email", {
              to: "bo@example.com",
              subject: "Notes",
              body: "Hi",
            }),
          });
          return verdict?.runLabels.join(",");
        }),
      );
      expect(held.filter((labels) => labels !== "private,untrusted")).toEqual([]);
    } finally {
      clients.close();
      await server.kill();
    }
  }, 60_000);
});
