import { describe, expect, it } from "vitest";
import { MAX_PATTERN_LENGTH, patternPointer } from "../../src/core/linear-regexp.js";
import { createSchemaCompiler, type JsonSchema } from "../../src/core/index.js";

// Issue 22: a pattern must never run on V8's backtracking engine. `^(a+)+$` against 31 "a"s and
// a "!" held a worker for 15.6 s; on RE2 the same check is linear in the argument.

const schemas = createSchemaCompiler();
const on = (pattern: string): JsonSchema => ({
  type: "object",
  properties: { body: { type: "string", pattern } },
});

/** The fastest of `rounds` batches of `n` checks of `body`, in nanoseconds per check. */
function nsPerCheck(pattern: string, body: string, n = 50, rounds = 7): number {
  const compiled = schemas.compile(on(pattern));
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i++) expect(compiled.check({ body })).toHaveLength(1);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / n);
  }
  return best;
}

describe("a pathological pattern", () => {
  it("answers in time linear in the argument: 3 to 31, then 31 vs 3,100 characters", () => {
    const pathological = "^(a+)+$";
    const at = (chars: number) => nsPerCheck(pathological, `${"a".repeat(chars - 1)}!`);
    at(3); // warm up the engine's code paths
    const three = at(3);
    // Backtracking doubles per character (2^28 times 3 at 31): the ramp stops at the first step
    // that costs over 100 times 3 characters, long before a check takes seconds. Linear: ~10.
    for (const chars of [5, 7, 9, 11, 13, 15, 20, 25, 31])
      expect(at(chars) / three).toBeLessThan(100);
    // 100 times the characters; linear costs at most ~100 times (less: fixed costs), never 2^3069.
    expect(at(3_100) / at(31)).toBeLessThan(1_000);
  });
});

describe("patterns the linear-time engine cannot run", () => {
  it.each([
    ["a backreference", "^(a)\\1$"],
    ["a lookahead", "^(?=a)a"],
    ["a negative lookahead", "^(?!a)b"],
    ["a lookbehind", "(?<=a)b"],
  ])("refuses %s at compile time, naming where it is", (_, pattern) => {
    expect(() => schemas.compile(on(pattern))).toThrow(
      `/properties/body/pattern: pattern ${JSON.stringify(pattern)} cannot run in linear time`,
    );
  });

  it("refuses one in patternProperties, naming the key", () => {
    expect(() => schemas.compile({ type: "object", patternProperties: { "(x)\\1": {} } })).toThrow(
      '/patternProperties/(x)\\1: pattern "(x)\\\\1" cannot run in linear time',
    );
  });

  it("refuses what is not ECMA-262, even when RE2 reads it (inline flags)", () => {
    expect(() => schemas.compile(on("(?i)abc"))).toThrow(
      '/properties/body/pattern: pattern "(?i)abc" is not a regular expression: Invalid regular expression',
    );
  });

  it(`refuses a pattern longer than ${MAX_PATTERN_LENGTH} characters`, () => {
    expect(() => schemas.compile(on("a".repeat(MAX_PATTERN_LENGTH + 1)))).toThrow(
      `is longer than ${MAX_PATTERN_LENGTH} characters`,
    );
    expect(() => schemas.compile(on("a".repeat(MAX_PATTERN_LENGTH)))).not.toThrow();
  });
});

describe("patterns on RE2 read as ECMA-262 u-mode patterns do", () => {
  it.each([
    ["^msg_[A-Za-z0-9]{8,40}$", "msg_7f3a9c21", true],
    ["^msg_[A-Za-z0-9]{8,40}$", "msg_7f3a", false],
    ["^(\\+[1-9][0-9]{6,14})?$", "+351912345678", true],
    ["^(\\+[1-9][0-9]{6,14})?$", "", true],
    ["@example\\.com$", "ana@example.com", true],
    ["@example\\.com$", "ana@exampleXcom", false],
    ["^\\/workspace(/|$)", "/workspace/a", true],
    ["^\\/workspace(/|$)", "/workspaces", false],
    ["^[^<>]*$", "no tags", true],
    ["^[^<>]*$", "<b>", false],
    ["^https://", "http://x", false],
    ["^\\u00e9$", "é", true],
    ["^\\u{1F600}$", "😀", true],
    ["^.$", "😀", true],
    ["^\\p{L}+$", "Ωé", true],
    ["^(?<id>[a-z]+)$", "abc", true],
    ["^\\d+$", "١٢٣", false],
  ])("%s on %j is %s", (pattern, value, holds) => {
    expect(schemas.compile(on(pattern)).check({ body: value }).length === 0).toBe(holds);
    expect(new RegExp(pattern, "u").test(value)).toBe(holds);
  });
});

describe("patternPointer()", () => {
  it("finds a pattern keyword, not a property named pattern nor a pattern inside data", () => {
    const schema = {
      const: { pattern: "x" },
      properties: { pattern: { type: "string" }, a: { items: [{ pattern: "x" }] } },
    };
    expect(patternPointer(schema, "x")).toBe("/properties/a/items/0/pattern");
    expect(patternPointer(schema, "y")).toBeUndefined();
  });
});
