import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorDetails } from "../../src/client/index.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { memoryLog } from "../support/memory-log.js";

// Findings of issue 10 about unbounded requests, against the real server: each refusal is
// RESOURCE_EXHAUSTED, comes before any work, and records nothing.
const memory = memoryLog();

let charter: TestCharter;
let writes = { grants: 0, decisions: 0 };
beforeAll(async () => {
  const log = memory.log;
  // Messages up to 8 MiB reach Charter, so its own field limits are what refuses them (the 1 MiB default would refuse them in grpc-js).
  charter = await startTestCharter({
    log,
    config: { maxTokenBytes: 6000, maxMessageBytes: 8 * 1024 * 1024 },
  });
  // Thin spies around the real store: count what is recorded.
  const store = charter.server.context.store as {
    putGrant: (...a: never[]) => Promise<void>;
    commitDecision: (...a: never[]) => Promise<unknown>;
  };
  const putGrant = store.putGrant.bind(store);
  const commitDecision = store.commitDecision.bind(store);
  store.putGrant = (...a) => ((writes.grants += 1), putGrant(...a));
  store.commitDecision = (...a) => ((writes.decisions += 1), commitDecision(...a));
});
afterAll(async () => {
  await charter.stop();
});

async function token(): Promise<string> {
  const issued = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:limits",
    owner: "ana@example.com",
    purpose: "limits",
  });
  return issued.grantToken;
}

async function refusal(
  p: Promise<unknown>,
): Promise<{ code: number; details: string; field: string | undefined }> {
  const err = (await p.then(
    () => undefined,
    (e: unknown) => e,
  )) as ({ code: number; details: string } & Parameters<typeof errorDetails>[0]) | undefined;
  if (!err) throw new Error("expected the call to fail");
  return {
    code: err.code,
    details: err.details,
    field: errorDetails(err).fieldViolations[0]?.field,
  };
}

describe("hard limits over gRPC", () => {
  it("refuses a 1 MB call id RESOURCE_EXHAUSTED and records no decision", async () => {
    const grantToken = await token();
    writes = { grants: 0, decisions: 0 };
    const r = await refusal(
      charter.clients.authority.authorize({
        grantToken,
        call: { callId: "c".repeat(1 << 20), toolName: "web_search", argumentsJson: "{}" },
      }),
    );
    expect(r).toMatchObject({ code: 8, field: "call.call_id" });
    expect(r.details).toBe("call.call_id: longer than 256 characters (maxFieldLength)");
    const long = await refusal(
      charter.clients.authority.authorize({
        grantToken,
        call: { callId: "c", toolName: "t".repeat(300), argumentsJson: "{}" },
      }),
    );
    expect(long.field).toBe("call.tool_name");
    expect(writes.decisions).toBe(0);
  });

  it("refuses 3.8 MB of arguments before parsing or checking them, and records nothing", async () => {
    const grantToken = await token();
    writes = { grants: 0, decisions: 0 };
    const argumentsJson = JSON.stringify({
      query: "x",
      junk: Array.from({ length: 300_000 }, (_, i) => `v${i}`),
    });
    expect(argumentsJson.length).toBeGreaterThan(2_500_000);
    const started = performance.now();
    const r = await refusal(
      charter.clients.authority.authorize({
        grantToken,
        call: {
          callId: "c",
          toolName: "web_search",
          argumentsJson: argumentsJson + " ".repeat(3_800_000 - argumentsJson.length),
        },
      }),
    );
    expect(r).toMatchObject({ code: 8, field: "call.arguments_json" });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(writes.decisions).toBe(0);
  });

  it("stops the schema check at the first problem: arguments with 10,000 faults give one short message", async () => {
    const grantToken = await token();
    const faults = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]));
    const { verdict } = await charter.clients.authority.authorize({
      grantToken,
      call: {
        callId: "c",
        toolName: "web_search",
        argumentsJson: JSON.stringify({ query: 1, ...faults }),
      },
    });
    expect(verdict).toMatchObject({
      decision: Decision.DENY,
      reason: { code: "INVALID_ARGUMENTS" },
    });
    expect(verdict?.reason?.message.length).toBeLessThan(300);
    expect(verdict?.reason?.message).toMatch(
      /\/query: must be of type string|property "k0" is not allowed/,
    );
  });

  it("refuses a batch over maxBatch on the raw bytes, before decoding it", async () => {
    const grantToken = await token();
    writes = { grants: 0, decisions: 0 };
    const items = Array.from({ length: 257 }, (_, i) => ({
      call: { callId: `c${i}`, toolName: "web_search", argumentsJson: "{}" },
    }));
    const r = await refusal(charter.clients.authority.batchAuthorize({ grantToken, items }));
    expect(r).toMatchObject({ code: 8, details: "items: at most 256 entries (maxBatch)" });
    expect(writes.decisions).toBe(0);
  });

  it("refuses a 200 KB purpose RESOURCE_EXHAUSTED and stores no grant", async () => {
    writes = { grants: 0, decisions: 0 };
    const r = await refusal(
      charter.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:x",
        owner: "ana@example.com",
        purpose: "p".repeat(200_000),
      }),
    );
    expect(r).toMatchObject({
      code: 8,
      field: "purpose",
      details: "purpose: longer than 4096 characters (maxTextLength)",
    });
    const many = await refusal(
      charter.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:x",
        owner: "ana@example.com",
        purpose: "p",
        requestedActions: Array.from({ length: 300 }, () => "web.search"),
      }),
    );
    expect(many).toMatchObject({ code: 8, field: "requested_actions" });
    expect(writes.grants).toBe(0);
  });

  it("refuses at issue a token larger than Authorize accepts, storing nothing", async () => {
    writes = { grants: 0, decisions: 0 };
    const r = await refusal(
      charter.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:x",
        owner: "ana@example.com",
        purpose: "p".repeat(4000),
      }),
    );
    expect(r.code).toBe(8);
    expect(r.details).toMatch(/more than the 6000 accepted \(maxTokenBytes\); nothing was issued/);
    expect(writes.grants).toBe(0);
  });

  it("logs the status the client got for a call refused over a limit", async () => {
    memory.clear();
    await refusal(
      charter.clients.keys
        .getJwks({})
        .then(() => charter.clients.grants.getGrant({ grantId: "g".repeat(10_000) })),
    );
    const line = memory.lines().find((l) => l["method"] === "/charter.v1.GrantService/GetGrant");
    expect(line).toMatchObject({ status: "RESOURCE_EXHAUSTED" });
    expect(JSON.stringify(memory.lines())).not.toContain("g".repeat(300));
  });
});

describe("the default message limit", () => {
  it("refuses 3.8 MB of arguments from the length prefix, before Charter decodes anything", async () => {
    const small = await startTestCharter();
    try {
      const { grantToken } = await small.clients.grants.issueGrant({
        profile: "owner-assistant",
        subject: "agent:x",
        owner: "ana@example.com",
        purpose: "p",
      });
      const r = await refusal(
        small.clients.authority.authorize({
          grantToken,
          call: { callId: "c", toolName: "web_search", argumentsJson: "x".repeat(3_800_000) },
        }),
      );
      expect(r.code).toBe(8);
    } finally {
      await small.stop();
    }
  });
});
