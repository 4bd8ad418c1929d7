import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { ApprovalEventKind, ApprovalOutcome } from "../../src/gen/charter/v1/approval_pb.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { expectDecisionsLogged } from "../support/audit-log.js";
import { runCapture } from "../support/cli.js";
import { ALLOWS, AUTHORIZE_OK, scrape } from "../support/metrics.js";
import { CHARTER_BIN as BIN, serveProcess } from "../support/serve-process.js";

// `charter serve --workers 2` as a real process: the primary forks two servers on one SQLite
// file. Budgets and the audit chain stay exact across them, watchers see approvals made through
// the other worker, SIGHUP reaches both, a killed worker is replaced, and SIGTERM under load
// loses no answered decision.
const ROOT = new URL("../../", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "charter-workers-"));
const policy = join(dir, "policy.yaml");
writeFileSync(
  policy,
  `version: workers-1
sources:
  budget-50:
    allow: [web.search]
    limits: { maxCalls: 50 }
  open:
    allow: [web.search]
    deny: [shell.exec]
    approval: [payment.charge]
  windowed:
    allow: [refund.issue]
    run:
      - id: cap
        actions: [refund.issue]
        window: { per: owner, duration: 1h, sum: /amount, max: 200 }
        then: deny
        reason: Refunds are capped at 200 per owner per hour.
profiles:
  budget-50: { sources: [budget-50] }
  open: { sources: [open] }
  windowed: { sources: [windowed] }
`,
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Line = Record<string, unknown>;

interface Served {
  readonly pid: number;
  readonly address: string;
  readonly dataDir: string;
  /** The JSON log lines printed so far (every process writes to the one stdout). */
  lines(): Line[];
  readonly exited: Promise<number | null>;
  signal(name: NodeJS.Signals): void;
}

async function serveWorkers(
  name: string,
  env: Readonly<Record<string, string>> = {},
): Promise<Served> {
  const dataDir = join(dir, name);
  const served = await serveProcess({
    dataDir,
    // This policy has no `manager` requirement: the demo's approver directory does not apply.
    args: ["--workers", "2", "--policy", policy, "--approvers", ""],
    env,
    keepStdout: true,
  });
  expect(served.stderr()).toContain("(2 workers)");
  return {
    pid: served.pid,
    address: served.address,
    dataDir,
    lines: () => served.lines(),
    exited: served.exited.then(({ code }) => code),
    signal: served.signal,
  };
}

/** `n` clients, each on a connection of its own (grpc-js would otherwise share one subchannel). */
function connections(address: string, n: number): CharterClients[] {
  return Array.from({ length: n }, () =>
    createCharterClients({ address, channelOptions: { "grpc.use_local_subchannel_pool": 1 } }),
  );
}

async function until(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const workersOf = (lines: Line[], match: (l: Line) => boolean) =>
  new Set(lines.filter(match).map((l) => l["worker"]));
const search = (id: string) => ({
  callId: id,
  toolName: "web_search",
  argumentsJson: JSON.stringify({ query: id }),
});
const cli = (dataDir: string, ...args: string[]) =>
  runCapture([
    ...args,
    "--config",
    join(ROOT, "fixtures", "charter.yaml"),
    "--policy",
    policy,
    "--approvers",
    "",
    "--data-dir",
    dataDir,
  ]);

/** Authorize calls (allows and denies) on every connection until `stopped()`; a connection whose server went away stops; every decision id answered goes to `received`. */
function loadUntil(
  clients: readonly CharterClients[],
  grantToken: string,
  tag: string,
  received: string[],
  stopped: () => boolean,
): Promise<void> {
  const lane = async (c: CharterClients, w: number) => {
    for (let i = 0; !stopped(); i++) {
      try {
        const call =
          i % 5 === 0
            ? {
                callId: `${tag}${w}-${i}`,
                toolName: "run_shell",
                argumentsJson: '{"command":"ls"}',
              }
            : search(`${tag}${w}-${i}`);
        const { verdict } = await c.authority.authorize({ grantToken, call });
        if (verdict) received.push(verdict.decisionId);
      } catch {
        return; // refused: the worker is gone or stopping
      }
    }
  };
  return Promise.all(clients.map((c, w) => lane(c, w))).then(() => undefined);
}

/** The chain verifies, and every decision id a client received is one of its records. */
const expectAllLogged = (dataDir: string, received: readonly string[]) =>
  expectDecisionsLogged((...args) => cli(dataDir, ...args), dataDir, received);

describe("charter serve --workers 2", () => {
  let served: Served;
  let clients: CharterClients[];
  beforeAll(async () => {
    served = await serveWorkers("shared", { CHARTER_METRICS_LISTEN: "127.0.0.1:0" });
    clients = connections(served.address, 8);
  }, 30_000);
  afterAll(async () => {
    for (const c of clients) c.close();
    served.signal("SIGTERM");
    expect(await served.exited).toBe(0);
  });

  it("allows exactly maxCalls 50 of 200 concurrent calls spread over both workers, and the audit chain verifies", async () => {
    const { grantToken } = await (clients[0] as CharterClients).grants.issueGrant({
      profile: "budget-50",
      subject: "agent:w",
      owner: "ana@example.com",
      purpose: "load",
    });
    const verdicts = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (clients[i % clients.length] as CharterClients).authority.authorize({
          grantToken,
          call: search(`b-${i}`),
        }),
      ),
    );
    expect(verdicts.filter((r) => r.verdict?.decision === Decision.ALLOW)).toHaveLength(50);
    expect(verdicts.filter((r) => r.verdict?.reason?.code === "LIMIT_EXCEEDED")).toHaveLength(150);
    await until(
      "the rpc log lines",
      () =>
        served.lines().filter((l) => l["method"] === "/charter.v1.AuthorityService/Authorize")
          .length >= 200,
    );
    expect(
      workersOf(served.lines(), (l) => l["method"] === "/charter.v1.AuthorityService/Authorize"),
    ).toEqual(new Set([1, 2]));
    await expectAllLogged(
      served.dataDir,
      verdicts.map((r) => r.verdict?.decisionId ?? ""),
    );
  });

  it("allows exactly 66 of 200 concurrent refunds of 3 under a window sum of 200, over both workers", async () => {
    const grants = await Promise.all(
      [0, 1].map((i) =>
        (clients[i] as CharterClients).grants.issueGrant({
          profile: "windowed",
          subject: `agent:win-${i}`,
          owner: "owner-windowed@example.com",
          purpose: "window",
        }),
      ),
    );
    const verdicts = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (clients[i % clients.length] as CharterClients).authority.authorize({
          grantToken: (grants[i % 2] as { grantToken: string }).grantToken,
          call: {
            callId: `win-${i}`,
            toolName: "issue_refund",
            argumentsJson: JSON.stringify({
              order_id: "ord_A1B2C3",
              amount: 3,
              currency: "EUR",
              reason: "damaged",
            }),
          },
        }),
      ),
    );
    expect(verdicts.filter((r) => r.verdict?.decision === Decision.ALLOW)).toHaveLength(66);
    expect(verdicts.filter((r) => r.verdict?.reason?.code === "RUN_RULE")).toHaveLength(134);
  });

  it("serves every worker's metrics summed from the primary's endpoint", async () => {
    const metrics = served.lines().find((l) => l["msg"] === "metrics endpoint serving");
    expect(metrics?.["worker"]).toBeUndefined();
    const address = metrics?.["address"] as string;
    const before = await scrape(address);
    const { grantToken } = await (clients[0] as CharterClients).grants.issueGrant({
      profile: "open",
      subject: "agent:m",
      owner: "ana@example.com",
      purpose: "metrics",
    });
    const verdicts = await Promise.all(
      clients.map((c, i) => c.authority.authorize({ grantToken, call: search(`m-${i}`) })),
    );
    expect(verdicts.every((r) => r.verdict?.decision === Decision.ALLOW)).toBe(true);
    const after = await scrape(address);
    expect((after.get(ALLOWS) ?? 0) - (before.get(ALLOWS) ?? 0)).toBe(clients.length);
    expect((after.get(AUTHORIZE_OK) ?? 0) - (before.get(AUTHORIZE_OK) ?? 0)).toBe(clients.length);
  });

  it("wakes watchers on both workers at once when an approval is created and decided through either (not at their 500 ms poll)", async () => {
    const owner = "watch@example.com";
    const { grantToken } = await (clients[0] as CharterClients).grants.issueGrant({
      profile: "open",
      subject: "agent:w",
      owner,
      purpose: "watch",
    });
    const stop = new AbortController();
    // What each watcher saw: "<approval id> <kind>".
    const seen: string[][] = clients.slice(0, 4).map(() => []);
    const watches = clients.slice(0, 4).map(async (c, i) => {
      for await (const event of c.approvals.watchApprovals({ owner }, { signal: stop.signal }))
        seen[i]?.push(`${event.approval?.id ?? ""} ${event.kind}`);
    });
    await new Promise((r) => setTimeout(r, 300)); // the streams are open
    // Three rounds: each watcher must see each event well within the poll interval, which only the relay achieves.
    for (let round = 0; round < 3; round++) {
      const args = JSON.stringify({
        customer_id: "cus_ABC123",
        amount: 10 + round,
        currency: "EUR",
        description: "x",
      });
      const held = await (clients[5] as CharterClients).authority.authorize({
        grantToken,
        call: { callId: `pay-${round}`, toolName: "charge_payment", argumentsJson: args },
      });
      expect(held.verdict?.decision).toBe(Decision.REQUIRE_APPROVAL);
      const id = held.verdict?.approvalId ?? "";
      await until(
        "every watcher to see the approval created",
        () => seen.every((s) => s.includes(`${id} ${ApprovalEventKind.CREATED}`)),
        200,
      );
      await (clients[6] as CharterClients).approvals.decideApproval({
        approvalId: id,
        outcome: ApprovalOutcome.APPROVE,
        decidedBy: owner,
        note: "ok",
      });
      await until(
        "every watcher to see the approval decided",
        () => seen.every((s) => s.includes(`${id} ${ApprovalEventKind.DECIDED}`)),
        200,
      );
    }
    stop.abort();
    await Promise.all(watches.map((w) => w.catch(() => undefined)));
    await until(
      "the watch log lines",
      () =>
        served.lines().filter((l) => l["method"] === "/charter.v1.ApprovalService/WatchApprovals")
          .length >= 4,
    );
    expect(
      workersOf(
        served.lines(),
        (l) => l["method"] === "/charter.v1.ApprovalService/WatchApprovals",
      ),
    ).toEqual(new Set([1, 2]));
  });

  it("reloads every worker on SIGHUP", async () => {
    served.signal("SIGHUP");
    await until(
      "both workers to reload",
      () => workersOf(served.lines(), (l) => l["msg"] === "catalog and policy reloaded").size === 2,
    );
  });

  it("replaces a worker killed under load, logging it, loses no decision it answered, and keeps serving", async () => {
    const serving = served.lines().find((l) => l["msg"] === "charter serving" && l["worker"] === 2);
    const pid = serving?.["pid"] as number;
    expect(pid).toBeGreaterThan(0);
    const loaded = connections(served.address, 8);
    const received: string[] = [];
    let stopped = false;
    try {
      const { grantToken } = await (loaded[0] as CharterClients).grants.issueGrant({
        profile: "open",
        subject: "agent:w",
        owner: "ana@example.com",
        purpose: "kill",
      });
      const load = loadUntil(loaded, grantToken, "k", received, () => stopped);
      await until("some load", () => received.length >= 200);
      process.kill(pid, "SIGKILL");
      await until("the restart", () =>
        served.lines().some((l) => l["msg"] === "worker restarted" && l["worker"] === 2),
      );
      stopped = true;
      await load;
    } finally {
      for (const c of loaded) c.close();
    }
    const exited = served.lines().find((l) => l["msg"] === "worker exited; restarting it");
    expect(exited).toMatchObject({ worker: 2, pid, signal: "SIGKILL" });
    await expectAllLogged(served.dataDir, received);
    const fresh = connections(served.address, 4);
    try {
      const { grantToken } = await (fresh[0] as CharterClients).grants.issueGrant({
        profile: "open",
        subject: "agent:w",
        owner: "ana@example.com",
        purpose: "after",
      });
      const verdicts = await Promise.all(
        fresh.map((c, i) => c.authority.authorize({ grantToken, call: search(`after-${i}`) })),
      );
      expect(verdicts.every((r) => r.verdict?.decision === Decision.ALLOW)).toBe(true);
    } finally {
      for (const c of fresh) c.close();
    }
    const replacement = served
      .lines()
      .filter((l) => l["msg"] === "charter serving" && l["worker"] === 2);
    expect(replacement.map((l) => l["pid"])).toHaveLength(2);
    expect(replacement[1]?.["pid"]).not.toBe(pid);
  });
});

describe("charter serve --workers 2, SIGTERM under load", () => {
  it("answers or refuses every call, loses no answered decision, says `charter stopped` once and exits 0", async () => {
    const served = await serveWorkers("sigterm");
    const clients = connections(served.address, 8);
    const received: string[] = [];
    let stopped = false;
    try {
      const { grantToken } = await (clients[0] as CharterClients).grants.issueGrant({
        profile: "open",
        subject: "agent:w",
        owner: "ana@example.com",
        purpose: "term",
      });
      const load = loadUntil(clients, grantToken, "t", received, () => stopped);
      await until("some load", () => received.length >= 300);
      served.signal("SIGTERM");
      expect(await served.exited).toBe(0);
      stopped = true;
      await load;
    } finally {
      for (const c of clients) c.close();
    }
    const lines = served.lines();
    expect(lines.filter((l) => l["msg"] === "charter stopped")).toHaveLength(1);
    expect(workersOf(lines, (l) => l["msg"] === "worker stopped")).toEqual(new Set([1, 2]));
    expect(
      workersOf(lines, (l) => l["method"] === "/charter.v1.AuthorityService/Authorize"),
    ).toEqual(new Set([1, 2]));
    await expectAllLogged(served.dataDir, received);
  });
});

describe("charter serve --workers 2, a worker that cannot start", () => {
  it("exits with the worker's code (78 for a configuration problem) and its message, leaving no process behind", () => {
    const result = spawnSync(
      process.execPath,
      [
        BIN,
        "serve",
        "--workers",
        "2",
        "--config",
        "fixtures/charter.yaml",
        "--listen",
        "0.0.0.0:0",
        "--data-dir",
        join(dir, "refused"),
        "--log-level",
        "silent",
      ],
      { cwd: ROOT, encoding: "utf8", timeout: 20_000 },
    );
    expect(result.status).toBe(78);
    expect(result.stderr).toContain("refusing to listen on 0.0.0.0:0");
  });
});
