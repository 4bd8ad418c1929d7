import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseCallArguments } from "../../src/core/call-request.js";
import { parseStrictJson } from "../../src/core/strict-json.js";

const LIMITS = { maxBytes: 1 << 20, maxDepth: 64 };

function problemOf(text: string, limits = LIMITS): string | undefined {
  const r = parseStrictJson(text, limits);
  return r.ok ? undefined : r.problem;
}

describe("parseStrictJson()", () => {
  it.each([
    ['{"to":"evil@attacker.com","to":"ana@example.com"}', "duplicate_key"],
    ['{"a":{"b":1,"c":2,"b":3}}', "duplicate_key"],
    ['[{"x":1},{"x":2,"x":2}]', "duplicate_key"],
    ['{"a":1,"\\u0061":2}', "duplicate_key"],
    ["\ufeff{}", "bom"],
    ['{"a":"\\ud800"}', "lone_surrogate"],
    ['{"a":"\\udc00\\ud800"}', "lone_surrogate"],
    ['{"\\ud800":1}', "lone_surrogate"],
    ['{"a":"\ud800"}', "lone_surrogate"],
    ['{"a":1e400}', "number_out_of_range"],
    ['{"a":-1e309}', "number_out_of_range"],
    ["[".repeat(20_000) + "]".repeat(20_000), "too_deep"],
    ['{"a":1,}', "syntax"],
    ["1 2", "syntax"],
    ['{"a":"\u0001"}', "syntax"],
    ["", "syntax"],
    ["NaN", "syntax"],
    ["{'a':1}", "syntax"],
  ])("refuses %j as %s", (text, problem) => {
    expect(problemOf(text)).toBe(problem);
  });

  it("refuses texts over the size limit, counted in UTF-8 bytes", () => {
    expect(problemOf(`"${"é".repeat(600)}"`, { maxBytes: 1000, maxDepth: 4 })).toBe("too_large");
    expect(problemOf(`"${"é".repeat(400)}"`, { maxBytes: 1000, maxDepth: 4 })).toBeUndefined();
  });

  it("accepts exactly the configured depth", () => {
    expect(problemOf("[[[]]]", { maxBytes: 100, maxDepth: 3 })).toBeUndefined();
    expect(problemOf("[[[[]]]]", { maxBytes: 100, maxDepth: 3 })).toBe("too_deep");
  });

  it("keeps __proto__ as an ordinary key, as JSON.parse does", () => {
    const r = parseStrictJson('{"__proto__":{"x":1}}', LIMITS);
    expect(r.ok && Object.hasOwn(r.value as object, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(r.ok ? r.value : null)).toBe(Object.prototype);
  });

  it("never echoes a value in its message", () => {
    const r = parseStrictJson('{"secret-key":"secret-value","secret-key":1}', LIMITS);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).not.toMatch(/secret/);
  });

  it("equals JSON.parse on texts without duplicates, BOM, lone surrogates or overflow", () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 6 }),
        fc.constantFrom(0, 2, undefined),
        (value, indent) => {
          const text = JSON.stringify(value, null, indent);
          const r = parseStrictJson(text, LIMITS);
          expect(r.ok).toBe(true);
          if (r.ok) expect(r.value).toStrictEqual(JSON.parse(text));
        },
      ),
      { numRuns: 10_000 },
    );
  });

  it("never throws, and refuses only what JSON.parse refuses or the rules above forbid", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary" }),
          fc.json().map((j) => j.slice(0, -1) + "}"),
        ),
        (text) => {
          const r = parseStrictJson(text, LIMITS);
          let native: unknown;
          let nativeOk = true;
          try {
            native = JSON.parse(text);
          } catch {
            nativeOk = false;
          }
          if (r.ok) expect(r.value).toStrictEqual(native);
          else if (r.problem === "syntax") expect(nativeOk).toBe(false);
        },
      ),
      { numRuns: 10_000 },
    );
  });
});

describe("parseCallArguments()", () => {
  it("reads blank text as no arguments, and a lone BOM as a BOM", () => {
    expect(parseCallArguments(" \n")).toEqual({ ok: true, value: {} });
    expect(parseCallArguments("\ufeff")).toMatchObject({ ok: false, problem: "bom" });
  });

  it("names the problem in a message for the model", () => {
    const r = parseCallArguments('{"to":"a","to":"b"}');
    expect(r).toMatchObject({ ok: false, problem: "duplicate_key" });
    if (!r.ok)
      expect(r.message).toMatch(
        /^The arguments are refused: a property name is repeated in one object/,
      );
  });
});
