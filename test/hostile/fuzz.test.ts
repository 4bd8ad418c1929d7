import { fromBinary } from "@bufbuild/protobuf";
import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AuthorizeResponseSchema,
  BatchAuthorizeResponseSchema,
} from "../../src/gen/charter/v1/authority_pb.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { contractMethods, inParallel, rawClient, type RawOutcome } from "../support/raw-grpc.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";
import { unbudgetedPolicy } from "../support/unbudgeted-policy.js";

// Fuzzing against the real server: it never crashes, never allows garbage, and keeps serving.
// FUZZ_RUNS raises the case count per target (npm run fuzz); FUZZ_SEED replays a run.
const RUNS = Number(process.env["FUZZ_RUNS"] ?? 10_000);
const SEED = Number(process.env["FUZZ_SEED"] ?? Date.now() % 2 ** 31);
const BATCH = 250;

let charter: TestCharter;
const policy = unbudgetedPolicy();
let grantToken: string;
let raw: ReturnType<typeof rawClient>;
beforeAll(async () => {
  // Thousands of calls under one grant: without a budget, so "allowed exactly when valid" holds for every one.
  charter = await startTestCharter({ config: { policy: policy.policy } });
  raw = rawClient(`127.0.0.1:${charter.server.port}`);
  ({ grantToken } = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:fuzz",
    owner: "ana@example.com",
    purpose: "fuzz",
  }));
});
afterAll(async () => {
  raw.close();
  await charter.stop();
  policy.remove();
});

/** A well-formed call still gets its allow: the server kept serving. */
async function stillServing(): Promise<void> {
  const { verdict } = await charter.clients.authority.authorize({
    grantToken,
    call: { callId: "after", toolName: "web_search", argumentsJson: '{"query":"still here"}' },
  });
  expect(verdict?.decision).toBe(Decision.ALLOW);
}

/** An independent oracle for web_search's arguments: its input schema, compiled by a fresh ajv. */
const webSearchValid = new Ajv2020({ strict: false }).compile({
  type: "object",
  properties: {
    query: { type: "string", minLength: 1, maxLength: 400 },
    max_results: { type: "integer", minimum: 1, maximum: 20 },
    recency_days: { type: "integer", minimum: 1, maximum: 3650 },
  },
  required: ["query"],
  additionalProperties: false,
});

async function batch(
  items: readonly { callId: string; toolName?: string; actionId?: string; argumentsJson: string }[],
) {
  const { verdicts } = await charter.clients.authority.batchAuthorize({
    grantToken,
    items: items.map((call) => ({ call })),
  });
  return verdicts;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) =>
    items.slice(i * size, (i + 1) * size),
  );
}

describe(`fuzzing the server (seed ${SEED}, ${RUNS} cases per target)`, () => {
  it("answers random bytes on every RPC with a status, never an allow", async () => {
    const methods = contractMethods().filter((m) => m.kind === "unary");
    expect(methods.length).toBeGreaterThanOrEqual(10);
    const cases = fc.sample(
      fc.tuple(fc.nat({ max: methods.length - 1 }), fc.uint8Array({ maxLength: 512 })),
      { numRuns: RUNS, seed: SEED },
    );
    const outcomes = await inParallel(cases, 64, ([m, body]) =>
      raw
        .call((methods[m] as { path: string }).path, body)
        .then((o): [string, RawOutcome] => [(methods[m] as { path: string }).path, o]),
    );
    for (const [path, outcome] of outcomes) {
      if (!outcome.ok) {
        expect([3, 5, 8, 9, 12, 16]).toContain(outcome.code); // INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, UNIMPLEMENTED, UNAUTHENTICATED
        continue;
      }
      if (path.endsWith("/Authorize"))
        expect(fromBinary(AuthorizeResponseSchema, outcome.bytes).verdict?.decision).not.toBe(
          Decision.ALLOW,
        );
      if (path.endsWith("/BatchAuthorize"))
        expect(
          fromBinary(BatchAuthorizeResponseSchema, outcome.bytes).verdicts.some(
            (v) => v.decision === Decision.ALLOW,
          ),
        ).toBe(false);
    }
    await stillServing();
  }, 120_000);

  it("allows random JSON arguments only when they are valid arguments", async () => {
    const text = fc.oneof(
      fc.json({ maxDepth: 4 }),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify({ query: "q", extra: v })),
      fc
        .record(
          {
            query: fc.string({ maxLength: 20 }),
            max_results: fc.oneof(fc.integer({ min: -5, max: 30 }), fc.double()),
          },
          { requiredKeys: [] },
        )
        .map((v) => JSON.stringify(v)),
      fc.string({ unit: "binary", maxLength: 60 }),
    );
    const cases = fc.sample(text, { numRuns: RUNS, seed: SEED });
    for (const group of chunks(cases, BATCH)) {
      const verdicts = await batch(
        group.map((argumentsJson, i) => ({
          callId: `j${i}`,
          toolName: "web_search",
          argumentsJson,
        })),
      );
      verdicts.forEach((v, i) => {
        if (v.decision !== Decision.ALLOW) return;
        const sent = group[i] as string;
        expect(webSearchValid(sent.trim() === "" ? {} : JSON.parse(sent)), sent).toBe(true);
      });
    }
    await stillServing();
  }, 120_000);

  it("allows no call under random or mutated tokens", async () => {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=";
    const mutated = fc
      .tuple(
        fc.nat({ max: grantToken.length - 1 }),
        fc.nat({ max: alphabet.length - 1 }).map((i) => alphabet.charAt(i)),
      )
      .map(([at, c]) => grantToken.slice(0, at) + c + grantToken.slice(at + 1));
    const tokens = fc.sample(
      fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: "binary" }), mutated),
      { numRuns: RUNS, seed: SEED },
    );
    const verdicts = await inParallel(tokens, 64, (token) =>
      charter.clients.authority
        .authorize({
          grantToken: token,
          call: { callId: "t", toolName: "web_search", argumentsJson: '{"query":"q"}' },
        })
        .then((r) => ({ token, decision: r.verdict?.decision })),
    );
    for (const { token, decision } of verdicts)
      if (token !== grantToken) expect(decision, token).not.toBe(Decision.ALLOW);
    await stillServing();
  }, 120_000);

  it("answers random tool names, action ids and call ids with a deny or a limit refusal, never an allow of an unknown tool", async () => {
    const names = fc.oneof(
      fc.string({ maxLength: 70 }),
      fc.string({ unit: "binary", maxLength: 70 }),
      fc.constantFrom(
        "web_search",
        "\ufeffweb_search",
        "web_search\u0000",
        "WEB_SEARCH",
        "web_search ",
      ),
    );
    const cases = fc.sample(
      fc.record({
        callId: fc.string({ unit: "binary", minLength: 1, maxLength: 80 }),
        toolName: names,
        actionId: fc.oneof(fc.constant(""), names),
      }),
      { numRuns: RUNS, seed: SEED },
    );
    for (const group of chunks(cases, BATCH)) {
      const verdicts = await batch(
        group.map((c) => ({ ...c, argumentsJson: '{"query":"q"}' })),
      ).catch((err: unknown) => {
        // A binary string may not survive UTF-8 (lone surrogates become U+FFFD) or may miss a name: never a crash.
        expect([3, 8]).toContain((err as { code: number }).code);
        return [];
      });
      verdicts.forEach((v, i) => {
        if (v.decision !== Decision.ALLOW) return;
        const c = group[i] as { toolName: string; actionId: string };
        expect(
          c.toolName === "web_search" ||
            (c.toolName === "" && c.actionId === "web.search") ||
            (c.toolName === "web_search" && c.actionId === "web.search"),
        ).toBe(true);
      });
    }
    await stillServing();
  }, 120_000);
});
