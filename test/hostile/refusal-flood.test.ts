import { status } from "@grpc/grpc-js";
import { rmSync } from "node:fs";
import { connect as http2Connect } from "node:http2";
import { connect as netConnect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey, readAuditRecords, type AuditEntry } from "../../src/authority/index.js";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { openSqliteStore } from "../../src/store/index.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { inParallel } from "../support/raw-grpc.js";

// Issue 22 finding 5: one local process wrote ~1,700 refused-call audit records a second. Refusals
// without a valid credential are now tallied: one record per peer, RPC, reason and interval,
// carrying `count`, so a flood writes O(intervals) records, and the counts sum to every refusal.

const GET_GRANT = "/charter.v1.GrantService/GetGrant";
const BAD_KEY = "an unknown, revoked or malformed API key";
const CALLS = 2_000;
/** 2,000 calls take seconds, more on a loaded machine. */
const FLOOD_TIMEOUT_MS = 120_000;

const clientsFor = (charter: TestCharter, secret?: string): CharterClients =>
  createCharterClients({
    address: `127.0.0.1:${charter.server.port}`,
    ...(secret === undefined ? {} : { metadata: { authorization: `Bearer ${secret}` } }),
  });

/** `calls` GetGrant calls with a wrong key, 50 in flight; every one must be UNAUTHENTICATED. */
async function flood(charter: TestCharter, calls: number): Promise<void> {
  const clients = clientsFor(charter, "chk_not-a-key");
  try {
    const codes = await inParallel(
      Array.from({ length: calls }, (_, i) => i),
      50,
      (i) =>
        clients.grants.getGrant({ grantId: `grt_${i}` }).then(
          () => status.OK,
          (err: unknown) => (err as { code: status }).code,
        ),
    );
    expect(codes.filter((c) => c !== status.UNAUTHENTICATED)).toEqual([]);
  } finally {
    clients.close();
  }
}

/** A GetGrant call over a raw HTTP/2 session from `localAddress`; answers its grpc-status. */
function callFrom(port: number, localAddress: string, authorization?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(`http://127.0.0.1:${port}`, {
      createConnection: () => netConnect({ host: "127.0.0.1", port, localAddress }),
    });
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": GET_GRANT,
      "content-type": "application/grpc",
      te: "trailers",
      ...(authorization === undefined ? {} : { authorization }),
    });
    let code: number | undefined;
    const take = (headers: Record<string, unknown>) => {
      const s = headers["grpc-status"];
      if (s !== undefined) code = Number(s);
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.on("error", reject);
    stream.resume();
    stream.on("close", () => {
      session.close();
      resolve(code ?? -1);
    });
    stream.end(Buffer.alloc(5)); // one empty message
  });
}

async function recordsOf(charter: TestCharter, after = 0): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const r of readAuditRecords(charter.server.context, after)) out.push(r.entry);
  return out;
}

/** The audit log of a stopped server's data dir, read from its store file. */
async function storedRecords(dataDir: string): Promise<AuditEntry[]> {
  const store = await openSqliteStore({ file: join(dataDir, "charter.db") });
  try {
    const out: AuditEntry[] = [];
    for await (const r of readAuditRecords({ store })) out.push(r.entry);
    return out;
  } finally {
    await store.close();
  }
}

const refusals = (records: AuditEntry[]) =>
  records.filter((r) => r.kind === "call.unauthenticated" && r.rpc === GET_GRANT);
const total = (records: AuditEntry[]) => records.reduce((n, r) => n + (r.count ?? 0), 0);

/** The GetGrant refusal records after `after`, once their counts reach `count` (or 15 s passed). */
async function refusalsUntil(
  charter: TestCharter,
  after: number,
  count: number,
): Promise<AuditEntry[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const records = refusals(await recordsOf(charter, after));
    if (total(records) >= count || Date.now() > deadline) return records;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a flood of unauthenticated calls", () => {
  const INTERVAL_MS = 250;
  /**
   * The audit head once an earlier test's refusals are all written: the tally folds them into
   * the next interval's records, which would otherwise be counted as this test's.
   */
  async function settledHead(): Promise<number> {
    for (;;) {
      const head = (await charter.server.context.store.auditHead())?.seq ?? 0;
      await new Promise((r) => setTimeout(r, 3 * INTERVAL_MS));
      if (((await charter.server.context.store.auditHead())?.seq ?? 0) === head) return head;
    }
  }
  let charter: TestCharter;
  let gatewayKey: string;
  let issuerKey: string;

  beforeAll(async () => {
    charter = await startTestCharter({ config: { auditRefusalIntervalMs: INTERVAL_MS } });
    issuerKey = (
      await createApiKey(charter.server.context, { principal: "orch", roles: ["issuer"] })
    ).secret;
    gatewayKey = (
      await createApiKey(charter.server.context, { principal: "gw", roles: ["gateway"] })
    ).secret;
  });
  afterAll(() => charter.stop());

  it(
    "writes O(intervals) records, not one per call, whose counts sum to every refusal",
    async () => {
      const before = await settledHead();
      const started = Date.now();
      await flood(charter, CALLS);
      const elapsed = Date.now() - started;
      // A tick after the flood writes its tail.
      const records = await refusalsUntil(charter, before, CALLS);
      expect(total(records)).toBe(CALLS);
      // One at once, then at most one per tick while the flood lasts (and one for its tail).
      expect(records.length).toBeLessThanOrEqual(Math.ceil(elapsed / INTERVAL_MS) + 2);
      expect(records.length).toBeLessThan(CALLS / 20);
      expect(records[0]).toMatchObject({ peer: "127.0.0.1", detail: BAD_KEY, count: 1 });
      for (const r of records) {
        expect(r).toMatchObject({ peer: "127.0.0.1", rpc: GET_GRANT, detail: BAD_KEY });
        expect(r.first ?? 0).toBeLessThanOrEqual(r.last ?? -1);
      }
      // The record never holds the key that was presented.
      expect(JSON.stringify(records)).not.toContain("not-a-key");
    },
    FLOOD_TIMEOUT_MS,
  );

  it(
    "answers a normal authorized client's every call during the flood",
    async () => {
      const issuer = clientsFor(charter, issuerKey);
      const gateway = clientsFor(charter, gatewayKey);
      try {
        const { grantToken } = await issuer.grants.issueGrant({
          profile: "owner-assistant",
          subject: "agent:normal",
          owner: "ana@example.com",
          purpose: "flood",
        });
        const attack = flood(charter, CALLS);
        const decisions: Decision[] = [];
        // 50: within the profile's maxCallsPerAction (60), so each one is an allow.
        for (let i = 0; i < 50; i++) {
          const { verdict } = await gateway.authority.authorize(
            {
              grantToken,
              call: { callId: `n${i}`, toolName: "web_search", argumentsJson: '{"query":"x"}' },
            },
            { timeoutMs: 5_000 },
          );
          decisions.push(verdict?.decision ?? Decision.UNSPECIFIED);
        }
        await attack;
        expect(decisions.filter((d) => d !== Decision.ALLOW)).toEqual([]);
      } finally {
        issuer.close();
        gateway.close();
      }
    },
    FLOOD_TIMEOUT_MS,
  );

  it("keeps peers and reasons apart: one record stream per peer address and reason", async () => {
    const before = await settledHead();
    const port = charter.server.port;
    const sent: Promise<number>[] = [];
    for (const peer of ["127.0.0.1", "127.0.0.2"])
      for (const authorization of [undefined, "Bearer chk_wrong"])
        for (let i = 0; i < 20; i++) sent.push(callFrom(port, peer, authorization));
    expect(new Set(await Promise.all(sent))).toEqual(new Set([status.UNAUTHENTICATED]));
    const counts = new Map<string, number>();
    for (const r of await refusalsUntil(charter, before, sent.length)) {
      const key = `${r.peer ?? "?"} ${r.detail ?? "?"}`;
      counts.set(key, (counts.get(key) ?? 0) + (r.count ?? 0));
    }
    expect(Object.fromEntries(counts)).toEqual({
      "127.0.0.1 no credentials": 20,
      [`127.0.0.1 ${BAD_KEY}`]: 20,
      "127.0.0.2 no credentials": 20,
      [`127.0.0.2 ${BAD_KEY}`]: 20,
    });
  });
});

describe("the tally at shutdown", () => {
  it(
    "writes the counts still pending when the server stops: nothing counted is lost",
    async () => {
      // An interval no test outlasts: only the first refusal is written before the stop.
      const charter = await startTestCharter({ config: { auditRefusalIntervalMs: 3_600_000 } });
      let stopped = false;
      try {
        await createApiKey(charter.server.context, { principal: "gw", roles: ["gateway"] });
        await flood(charter, CALLS);
        expect(refusals(await recordsOf(charter))).toHaveLength(1);
        await charter.stop({ keepData: true });
        stopped = true;
        const records = refusals(await storedRecords(charter.dataDir));
        expect(records.map((r) => r.count)).toEqual([1, CALLS - 1]);
        expect(total(records)).toBe(CALLS);
      } finally {
        if (stopped) rmSync(charter.dataDir, { recursive: true, force: true });
        else await charter.stop();
      }
    },
    FLOOD_TIMEOUT_MS,
  );
});
