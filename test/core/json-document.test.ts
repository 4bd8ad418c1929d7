import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseJsonDocument, type JsonDocument } from "../../src/core/json-document.js";
import { parseStrictJson } from "../../src/core/strict-json.js";

const LIMITS = { maxBytes: 1 << 20, maxDepth: 8 };

function documentOf(text: string): JsonDocument {
  const read = parseJsonDocument(text, LIMITS);
  if (!read.ok) throw new Error(read.message);
  return read.document;
}

/** Every object and array in a value, depth first. */
function containers(value: unknown): object[] {
  if (typeof value !== "object" || value === null) return [];
  return [value, ...Object.values(value).flatMap(containers)];
}

describe("parseJsonDocument()", () => {
  it("reads what a strict parse accepts as that parse does, with no problems", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = JSON.stringify(value);
        const doc = documentOf(text);
        expect(doc.problems).toEqual([]);
        expect(doc.value).toEqual(parseStrictJson(text, LIMITS).ok ? JSON.parse(text) : undefined);
      }),
      { numRuns: 300 },
    );
  });

  it("gives every object and array the span of its own text", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.boolean(), (value, spaced) => {
        const text = JSON.stringify(value, null, spaced ? 2 : undefined);
        const doc = documentOf(text);
        for (const node of containers(doc.value)) {
          const span = doc.spanOf(node);
          expect(span).toBeDefined();
          const [start, end] = span as readonly [number, number];
          expect(JSON.parse(text.slice(start, end))).toEqual(node);
        }
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ['{"a":{"b":1,"b":2}}', "duplicate_key", 12],
    ['{"a":{"s":"\\ud800"}}', "lone_surrogate", 10],
    ['{"a":[1e400]}', "number_out_of_range", 6],
    [`{"a":${"[".repeat(9)}${"]".repeat(9)}}`, "too_deep", 12],
  ])("collects what a strict parse refuses, where it is: %s", (text, problem, at) => {
    expect(parseStrictJson(text, LIMITS).ok).toBe(false);
    const doc = documentOf(text);
    expect(doc.problems.map((p) => [p.problem, p.at])).toEqual([[problem, at]]);
    // The problem lies inside the span of the object under "a".
    const a = (doc.value as Record<string, unknown>)["a"];
    const span = doc.spanOf(a);
    expect(span && at >= span[0] && at < span[1]).toBe(true);
    // That span's text, parsed strictly alone, is refused for the same problem.
    const alone = parseStrictJson(text.slice(...(span as [number, number])), LIMITS);
    expect(alone.ok ? undefined : alone.problem).toBe(problem);
  });

  it("passes a container nested too deep over whole, strings with brackets included", () => {
    const deep = `${"[".repeat(8)}"]]]\\"["${"]".repeat(8)}`;
    const text = `{"a":${deep},"b":true}`;
    const doc = documentOf(text);
    expect(doc.problems.map((p) => p.problem)).toEqual(["too_deep"]);
    expect((doc.value as Record<string, unknown>)["b"]).toBe(true);
    // Down to the placeholder: an empty array whose span is the rest of the nesting, string and all.
    let node: unknown = (doc.value as Record<string, unknown>)["a"];
    while (Array.isArray(node) && node.length > 0) node = node[0];
    const [start, end] = doc.spanOf(node) ?? [0, 0];
    expect(text.slice(start, end)).toBe('["]]]\\"["]');
  });

  it.each([
    ["{", "syntax"],
    ['\ufeff{"a":1}', "bom"],
    [`{"a":"${"x".repeat(1 << 20)}"}`, "too_large"],
    [`[${"[".repeat(20)}`, "syntax"],
  ])("still refuses a text that is no document (%#)", (text, problem) => {
    const read = parseJsonDocument(text, LIMITS);
    expect(read.ok ? undefined : read.problem).toBe(problem);
  });
});
