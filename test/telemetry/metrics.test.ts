import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isConfigError } from "../../src/config/config.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { ALLOWS, AUTHORIZE_OK, scrape } from "../support/metrics.js";

// The Prometheus endpoint of a real server: scraped over HTTP, its counters move with real calls.

describe("the metrics endpoint", () => {
  let charter: TestCharter;
  let address: string;
  beforeAll(async () => {
    charter = await startTestCharter({ config: { metricsListen: "127.0.0.1:0" } });
    address = charter.server.metricsAddress ?? "";
  });
  afterAll(() => charter.stop());

  it("counts decisions by verdict and reason, RPC latency by method and status, store and audit-commit latency, and the token cache", async () => {
    const before = await scrape(address);
    const { grantToken } = await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "agent:m",
      owner: "ana@example.com",
      purpose: "metrics",
    });
    for (let i = 0; i < 5; i++) {
      const { verdict } = await charter.clients.authority.authorize({
        grantToken,
        call: { callId: `a${i}`, toolName: "web_search", argumentsJson: '{"query":"q"}' },
      });
      expect(verdict?.decision).toBe(Decision.ALLOW);
    }
    for (let i = 0; i < 3; i++) {
      const { verdict } = await charter.clients.authority.authorize({
        grantToken,
        call: { callId: `d${i}`, toolName: "run_shell", argumentsJson: '{"command":"ls"}' },
      });
      expect(verdict?.reason?.code).toBe("EXPLICIT_DENY");
    }
    const after = await scrape(address);
    const moved = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    expect(moved(ALLOWS)).toBe(5);
    expect(moved('charter_decisions_total{verdict="deny",reason="EXPLICIT_DENY"}')).toBe(3);
    expect(moved(AUTHORIZE_OK)).toBe(8);
    expect(
      moved(
        'charter_rpc_duration_seconds_count{method="/charter.v1.GrantService/IssueGrant",status="OK"}',
      ),
    ).toBe(1);
    expect(moved('charter_store_operation_seconds_count{operation="commitDecision"}')).toBe(8);
    expect(moved("charter_audit_commit_units_total")).toBeGreaterThanOrEqual(9);
    expect(moved("charter_audit_commit_seconds_count")).toBeGreaterThanOrEqual(1);
    expect(after.get('charter_cache_entries{cache="token"}')).toBe(1);
    expect(moved('charter_cache_hits_total{cache="token"}')).toBe(7);
    expect(moved('charter_cache_misses_total{cache="token"}')).toBe(1);
    // The demo catalog's validators were compiled at load; the calls' grants bring no new schema to compile.
    expect(after.get('charter_cache_entries{cache="schemas"}')).toBeGreaterThan(10);
    expect(after.get('charter_cache_misses_total{cache="schemas"}')).toBeGreaterThan(10);
    // The embedded store's WAL holds at least the frames of the groups just committed.
    expect(after.get("charter_sqlite_wal_bytes")).toBeGreaterThan(4096);
  });

  it("answers 404 off /metrics", async () => {
    expect((await fetch(`http://${address}/other`)).status).toBe(404);
  });
});

describe("metricsListen", () => {
  it("refuses a non-loopback address unless metricsAllowRemote is set", async () => {
    const err = await startTestCharter({ config: { metricsListen: "0.0.0.0:0" } }).then(
      (c) => c.stop().then(() => expect.fail("expected a refusal")),
      (e: unknown) => e,
    );
    expect(isConfigError(err)).toBe(true);
    expect((err as Error).message).toMatch(
      /refusing to serve metrics on 0\.0\.0\.0:0 .*set metricsAllowRemote/,
    );
    const allowed = await startTestCharter({
      config: { metricsListen: "0.0.0.0:0", metricsAllowRemote: true },
    });
    try {
      expect(allowed.server.metricsAddress).toMatch(/^0\.0\.0\.0:\d+$/);
    } finally {
      await allowed.stop();
    }
  });

  it("is off by default: no endpoint, no recorder", async () => {
    const charter = await startTestCharter();
    try {
      expect(charter.server.metricsAddress).toBeUndefined();
    } finally {
      await charter.stop();
    }
  });
});
