import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJsonDocument } from "../../src/core/json-document.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { DIALECT_NAMES, type DialectName } from "../../src/interop/dialects/index.js";
import { DIALECT_TO_PROTO } from "../../src/interop/enums.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../support/charter-server.js";
import { runCapture } from "../support/cli.js";
import { startRawGateway, type RawGateway } from "../support/raw-gateway.js";
import { startRecordingServer, type RecordingServer } from "../support/recording-mcp-server.js";

// One corpus of hostile argument texts sent through every door Charter has — Authorize,
// BatchAuthorize, AuthorizeTurn in each dialect (the arguments as a JSON string, and as the
// object itself where the text is one), the stdio MCP gateway (raw JSON-RPC lines) and the CLI
// (online and offline) — gives the same verdict and reason code at every door. Authorize is the
// reference; the corpus is built so that a door that read the arguments leniently (the last of
// repeated keys, a BOM dropped, 1e400 read as Infinity) would allow where Authorize denies.

const CATALOG = join(FIXTURES, "doors", "catalog.yaml");
const POLICY = join(FIXTURES, "doors", "policy.yaml");
const BIN = new URL("../../dist/cli/bin.js", import.meta.url).pathname;
const TOOL = "write_note";

const nest = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

/** [name, arguments text, the reference outcome: decision and reason code]. */
const CORPUS: readonly (readonly [string, string, string])[] = [
  ["a benign call", '{"text":"hello"}', "allow"],
  ["a call a rule denies", '{"text":"forbidden"}', "deny RULE_DENY"],
  ["a repeated key at the top", '{"text":"forbidden","text":"fine"}', "deny INVALID_ARGUMENTS"],
  [
    "a repeated key, first value allowed",
    '{"text":"fine","text":"forbidden"}',
    "deny INVALID_ARGUMENTS",
  ],
  [
    "a repeated key one level down",
    '{"text":"fine","meta":{"a":1,"a":2}}',
    "deny INVALID_ARGUMENTS",
  ],
  [
    "a repeated key four levels down",
    '{"text":"fine","meta":{"b":{"c":{"d":{"e":1,"e":2}}}}}',
    "deny INVALID_ARGUMENTS",
  ],
  [
    "a repeated key in an object inside an array",
    '{"text":"fine","meta":{"list":[1,{"k":1,"k":2}]}}',
    "deny INVALID_ARGUMENTS",
  ],
  [
    "a repeated __proto__ key",
    '{"text":"fine","meta":{"__proto__":1,"__proto__":2}}',
    "deny INVALID_ARGUMENTS",
  ],
  ["a byte order mark", '\ufeff{"text":"fine"}', "deny INVALID_ARGUMENTS"],
  ["an escaped lone surrogate", '{"text":"fine \\ud800"}', "deny INVALID_ARGUMENTS"],
  [
    "an escaped lone low surrogate in a key",
    '{"text":"fine","meta":{"\\udc00":1}}',
    "deny INVALID_ARGUMENTS",
  ],
  ["a number out of range", '{"text":"fine","meta":{"n":1e400}}', "deny INVALID_ARGUMENTS"],
  [
    "a negative number out of range",
    '{"text":"fine","meta":{"n":-1e309}}',
    "deny INVALID_ARGUMENTS",
  ],
  [
    "nesting one past the bound",
    `{"text":"fine","meta":{"x":${nest(31)}}}`,
    "deny INVALID_ARGUMENTS",
  ],
  [
    "nesting far past the bound",
    `{"text":"fine","meta":{"x":${nest(5_000)}}}`,
    "deny INVALID_ARGUMENTS",
  ],
  ["nesting at the bound", `{"text":"fine","meta":{"x":${nest(30)}}}`, "allow"],
  [
    "invisible and confusable characters",
    '{"text":"fine\\u200b\\u202e \\u0430","meta":{"\\u00e9":1}}',
    "allow",
  ],
  ["raw invisible characters", '{"text":"fi\u200dne\u2066"}', "allow"],
  ["numbers written unusually", '{"text":"fine","meta":{"a":1.0,"b":1e2,"c":-0}}', "allow"],
  ["over the size bound in bytes", `{"text":"${"é".repeat(140_000)}"}`, "deny INVALID_ARGUMENTS"],
  ["text that is not JSON", '{"text":', "deny INVALID_ARGUMENTS"],
  ["JSON that is not an object", '["text"]', "deny INVALID_ARGUMENTS"],
  ["no arguments", "", "deny INVALID_ARGUMENTS"],
];

/** Each dialect's turn with one call of TOOL whose arguments are `args` (JSON text of the field). */
const TURNS: Readonly<Record<DialectName, (args: string) => string>> = {
  neutral: (a) => `{"callId":"c1","toolName":"${TOOL}","arguments":${a}}`,
  openai_chat: (a) =>
    `{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"${TOOL}","arguments":${a}}}]}`,
  openai_responses: (a) =>
    `{"output":[{"type":"function_call","call_id":"c1","name":"${TOOL}","arguments":${a}}]}`,
  anthropic: (a) =>
    `{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"${TOOL}","input":${a}}]}`,
  mcp: (a) =>
    `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"${TOOL}","arguments":${a}}}`,
  gemini: (a) =>
    `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"${TOOL}","args":${a}}}]}}]}`,
  langchain: (a) =>
    `{"type":"ai","tool_calls":[{"type":"tool_call","id":"c1","name":"${TOOL}","args":${a}}]}`,
  pydantic_ai: (a) =>
    `{"kind":"response","parts":[{"part_kind":"tool-call","tool_call_id":"c1","tool_name":"${TOOL}","args":${a}}]}`,
};

/** Whether the text can stand in a turn as the arguments object itself. */
function isObjectText(text: string): boolean {
  const read = parseJsonDocument(text, { maxBytes: Number.MAX_SAFE_INTEGER, maxDepth: 10_000 });
  return read.ok && typeof read.document.value === "object" && !Array.isArray(read.document.value);
}

const DECISIONS: Readonly<Record<number, string>> = {
  [Decision.ALLOW]: "allow",
  [Decision.DENY]: "deny",
  [Decision.REQUIRE_APPROVAL]: "require_approval",
  [Decision.EFFECT_SUPPRESSED]: "effect_suppressed",
};

function outcome(
  v: { decision: number | string; reason?: { code: string } | undefined } | undefined,
): string {
  if (!v) return "no verdict";
  // A verdict over gRPC has the enum's number; the CLI prints its proto JSON name.
  const decision =
    typeof v.decision === "number"
      ? (DECISIONS[v.decision] ?? "?")
      : v.decision.replace(/^DECISION_/, "").toLowerCase();
  return decision === "deny" ? `deny ${v.reason?.code ?? ""}` : decision;
}

let charter: TestCharter;
let token: string;
let dataDir: string;

beforeAll(async () => {
  charter = await startTestCharter({ config: { catalog: CATALOG, policy: POLICY } });
  ({ grantToken: token } = await charter.clients.grants.issueGrant({
    profile: "notes",
    subject: "agent:doors",
    owner: "ana@example.com",
    purpose: "door differential",
  }));
  dataDir = mkdtempSync(join(tmpdir(), "charter-doors-"));
});
afterAll(async () => {
  await charter.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const authorize = async (text: string) =>
  outcome(
    (
      await charter.clients.authority.authorize({
        grantToken: token,
        call: { callId: "c1", toolName: TOOL, argumentsJson: text },
      })
    ).verdict,
  );

describe.each(CORPUS.map(([name, text, want]) => ({ name, text, want })))(
  "$name: the same verdict at every door",
  ({ text, want }) => {
    it("Authorize (the reference)", async () => {
      expect(await authorize(text)).toBe(want);
    });

    it("BatchAuthorize", async () => {
      const { verdicts } = await charter.clients.authority.batchAuthorize({
        grantToken: token,
        items: [
          { call: { callId: "c1", toolName: TOOL, argumentsJson: '{"text":"hello"}' } },
          { call: { callId: "c2", toolName: TOOL, argumentsJson: text } },
        ],
      });
      expect(verdicts.map(outcome)).toEqual(["allow", want]);
    });

    it.each(
      DIALECT_NAMES.flatMap((d) => [
        [d, "string"] as const,
        ...(isObjectText(text) ? [[d, "object"] as const] : []),
      ]),
    )("AuthorizeTurn, %s, the arguments as a JSON %s", async (dialect, form) => {
      const turnJson = TURNS[dialect](form === "string" ? JSON.stringify(text) : text);
      const res = await charter.clients.authority.authorizeTurn({
        grantToken: token,
        dialect: DIALECT_TO_PROTO[dialect],
        turnJson,
      });
      expect(res.verdicts.map(outcome)).toEqual([want]);
      // What the turn echoes as the call's arguments is the text sent, exactly.
      expect(res.calls[0]?.argumentsJson).toBe(text);
    });

    // Flags made when the test runs: the server's port is known only then.
    const doors: Readonly<Record<string, () => string[]>> = {
      online: () => ["--server", `127.0.0.1:${charter.server.port}`, "--token", token],
      offline: () => [
        "--catalog",
        CATALOG,
        "--policy",
        POLICY,
        "--data-dir",
        dataDir,
        "--profile",
        "notes",
      ],
    };
    it.each(Object.keys(doors))("the CLI, %s", async (mode) => {
      const how = doors[mode]?.() ?? [];
      const r = await runCapture(["check", ...how, "--tool", TOOL, "--args", text]);
      const printed = JSON.parse(r.out) as { decision: string; reason?: { code: string } };
      expect(outcome(printed), r.err).toBe(want);
    });
  },
);

/** A JSON-RPC response of the gateway. */
interface GatewayReply {
  readonly id?: unknown;
  readonly result?: { readonly isError?: boolean; readonly content?: { readonly text: string }[] };
  readonly error?: { readonly code: number };
}

describe("the stdio MCP gateway, raw JSON-RPC lines", () => {
  let upstream: RecordingServer;
  let gateway: RawGateway;
  const next = () => gateway.next();
  const send = (line: string) => gateway.send(line);

  beforeAll(async () => {
    upstream = await startRecordingServer({ tools: [TOOL], catalogFile: CATALOG });
    gateway = await startRawGateway([
      BIN,
      "mcp-gateway",
      "--server",
      `127.0.0.1:${charter.server.port}`,
      "--token",
      token,
      "--upstream-url",
      upstream.url,
    ]);
  });
  afterAll(async () => {
    await gateway.stop();
    await upstream.stop();
  });

  /** The gateway's answer as an outcome: a tool result (allowed: the upstream ran it) or the refusal's code. */
  function gatewayOutcome(reply: GatewayReply): string {
    if (reply.error) return `error ${reply.error.code}`;
    const text = reply.result?.content?.[0]?.text ?? "";
    if (!reply.result?.isError) return text === `ran ${TOOL}` ? "allow" : `unexpected ${text}`;
    const code = /^Denied \(([A-Z_]+)\)/.exec(text)?.[1];
    return code === undefined ? `refused ${text}` : `deny ${code}`;
  }

  // Texts that can stand as an MCP `arguments` object; the others are not MCP requests at all.
  it.each(
    CORPUS.filter(([, text]) => isObjectText(text)).map(
      ([name, text, want], i) => [name, text, want, i] as const,
    ),
  )("%s", async (_name, text, want, i) => {
    const before = upstream.calls.length;
    send(
      `{"jsonrpc":"2.0","id":${100 + i},"method":"tools/call","params":{"name":"${TOOL}","arguments":${text}}}`,
    );
    const reply = (await next()) as GatewayReply;
    expect(reply.id).toBe(100 + i);
    expect(gatewayOutcome(reply)).toBe(want);
    expect(upstream.calls.length).toBe(before + (want === "allow" ? 1 : 0));
  });

  it("forwards an allowed call's arguments as they were decided", async () => {
    const before = upstream.calls.length;
    send(
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${TOOL}","arguments":{"text":"fine","meta":{"a":1.0}},"_meta":{"io.charter/arguments-json":"{\\"text\\":\\"forbidden\\"}"}}}`,
    );
    expect(gatewayOutcome((await next()) as GatewayReply)).toBe("allow");
    expect(upstream.calls.slice(before)).toEqual([
      { name: TOOL, arguments: { text: "fine", meta: { a: 1 } } },
    ]);
  });

  it("refuses a repeated key outside the arguments, forwarding nothing", async () => {
    const before = upstream.calls.length;
    send(
      `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nothing","name":"${TOOL}","arguments":{"text":"fine"}}}`,
    );
    expect(await next()).toMatchObject({ id: 8, error: { code: -32602 } });
    send(`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{},"params":{}}`);
    expect(await next()).toMatchObject({ id: 9, error: { code: -32600 } });
    expect(upstream.calls.length).toBe(before);
  });
});
