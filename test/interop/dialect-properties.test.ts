import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isJsonObject, type JsonValue } from "../../src/core/json.js";
import { DIALECTS, DIALECT_NAMES } from "../../src/interop/dialects/index.js";
import { turnDocument } from "../support/dialect-corpus.js";

// Every parser, on any JSON value, either parses or answers an error naming its dialect: it never
// throws, and every call it finds is in the payload (its name, its id and its arguments), so a
// call is never invented.

const KEYS = [
  "type",
  "role",
  "content",
  "tool_calls",
  "invalid_tool_calls",
  "function",
  "name",
  "arguments",
  "id",
  "call_id",
  "input",
  "parts",
  "functionCall",
  "args",
  "method",
  "jsonrpc",
  "params",
  "part_kind",
  "tool_name",
  "tool_call_id",
  "kind",
  "choices",
  "message",
  "candidates",
  "output",
  "calls",
  "callId",
  "toolName",
  "lc",
  "kwargs",
];
const WORDS = [
  "function",
  "tool_use",
  "function_call",
  "tools/call",
  "2.0",
  "ai",
  "tool_call",
  "invalid_tool_call",
  "tool-call",
  "response",
  "model",
  "assistant",
  "constructor",
  "AIMessage",
  "read_file",
  "{}",
  '{"path":"/workspace/a"}',
  "{",
  "42",
];

/** JSON values shaped like tool-call payloads, so the parsers' accepting paths are reached too. */
const shaped: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom<JsonValue>(...WORDS, null, true, 0, 42, -1.5),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie("value"), { maxKeys: 6 }),
  ),
})).value;

const name = fc.oneof(fc.constantFrom<JsonValue>("read_file", "send_email", "x"), shaped);
const id = fc.oneof(fc.constantFrom<JsonValue>("call_1", "call_2", 7, "7"), shaped);
const args = fc.oneof(
  fc.constantFrom<JsonValue>({ path: "/workspace/a" }, '{"path":"/x"}', "{", {}),
  shaped,
);
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

/** Each framework's documented call shapes, with any field possibly replaced by noise. */
const templates: fc.Arbitrary<JsonValue> = fc
  .oneof(
    fc.record(
      {
        id: maybe(id),
        type: fc.constant("function"),
        function: fc.record({ name, arguments: args }),
      },
      { requiredKeys: ["function"] },
    ),
    fc.record(
      { type: fc.constant("function_call"), call_id: maybe(id), name, arguments: args },
      { requiredKeys: ["type", "name"] },
    ),
    fc.record(
      { type: fc.constant("tool_use"), id: maybe(id), name, input: args },
      { requiredKeys: ["type", "name"] },
    ),
    fc.record({
      functionCall: fc.record(
        { name, args: maybe(args), id: maybe(id) },
        { requiredKeys: ["name"] },
      ),
    }),
    fc.record({
      jsonrpc: fc.constant("2.0"),
      id,
      method: fc.constant("tools/call"),
      params: fc.record({ name, arguments: maybe(args) }, { requiredKeys: ["name"] }),
    }),
    fc.record(
      {
        name,
        args: maybe(args),
        id: maybe(id),
        type: fc.constantFrom("tool_call", "invalid_tool_call"),
      },
      { requiredKeys: ["name"] },
    ),
    fc.record(
      {
        part_kind: fc.constant("tool-call"),
        tool_name: name,
        args: maybe(args),
        tool_call_id: maybe(id),
      },
      { requiredKeys: ["part_kind", "tool_name"] },
    ),
    fc.record(
      { callId: maybe(id), toolName: name, arguments: maybe(args) },
      { requiredKeys: ["toolName"] },
    ),
  )
  .map((v) => JSON.parse(JSON.stringify(v)) as JsonValue);

/** Bare lists of calls, and the same wrapped the way each framework wraps them. */
const nearValid: fc.Arbitrary<JsonValue> = fc
  .array(templates, { minLength: 1, maxLength: 3 })
  .chain((calls) =>
    fc.constantFrom<JsonValue>(
      calls,
      calls[0] as JsonValue,
      { role: "assistant", tool_calls: calls },
      { choices: [{ message: { role: "assistant", tool_calls: calls } }] },
      { object: "response", output: calls },
      { role: "assistant", content: calls },
      { candidates: [{ content: { role: "model", parts: calls } }] },
      { type: "ai", tool_calls: calls },
      { kind: "response", parts: calls },
      { calls },
    ),
  );

/** Every string in a JSON value, and the text of every number and object in it. */
function atoms(value: unknown, out = new Set<string>()): Set<string> {
  if (typeof value === "string") out.add(value);
  else if (typeof value === "number") out.add(String(value));
  else if (Array.isArray(value)) value.forEach((v) => atoms(v, out));
  else if (isJsonObject(value)) {
    out.add(JSON.stringify(value));
    Object.values(value).forEach((v) => atoms(v, out));
  }
  return out;
}

describe.each(DIALECT_NAMES)("%s parseCalls()", (dialect) => {
  const codec = DIALECTS[dialect];

  it.each([
    ["any JSON", fc.jsonValue()],
    ["tool-call-shaped JSON", shaped],
    ["near-valid turns", nearValid],
  ])("on %s, parses or errors, and invents no call", (_what, arbitrary) => {
    fc.assert(
      fc.property(arbitrary, (payload) => {
        const parsed = codec.parseCalls(turnDocument(payload));
        if (!parsed.ok) {
          expect(parsed.error.startsWith(`${dialect} turn: `)).toBe(true);
          return;
        }
        const found = atoms(payload);
        for (const call of parsed.calls) {
          expect(found.has(call.toolName)).toBe(true);
          expect(call.argumentsJson === "" || found.has(call.argumentsJson)).toBe(true);
          if (call.wireId === undefined)
            expect(call.callId).toMatch(new RegExp(`^${dialect}_[0-9a-f]{12}_\\d+$`));
          else
            expect(found.has(String(call.wireId)) && call.callId === String(call.wireId)).toBe(
              true,
            );
        }
        expect(new Set(parsed.calls.map((c) => c.callId)).size).toBe(parsed.calls.length);
      }),
      { numRuns: 400 },
    );
  });

  it("reaches its accepting path on tool-call-shaped JSON (the property above is not vacuous)", () => {
    const found = fc.sample(nearValid, { numRuns: 2000, seed: 11 }).filter((p) => {
      const parsed = codec.parseCalls(turnDocument(p));
      return parsed.ok && parsed.calls.length > 0;
    });
    expect(found.length).toBeGreaterThan(0);
  });

  it("gives a turn the same derived ids every time", () => {
    fc.assert(
      fc.property(shaped, (payload) => {
        expect(codec.parseCalls(turnDocument(payload))).toEqual(
          codec.parseCalls(turnDocument(structuredClone(payload))),
        );
      }),
      { numRuns: 100 },
    );
  });
});
