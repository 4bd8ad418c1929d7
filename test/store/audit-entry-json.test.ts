import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/digest.js";
import { auditEntryJson } from "../../src/store/audit-row.js";

const withoutUndefined = (r: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined));

const key = fc
  .oneof(
    fc.string({ unit: "binary" }),
    fc.string({ unit: "binary-ascii" }),
    fc.constantFrom("seq", "at", "kind", "decisionId"),
  )
  .filter((k) => k !== "__proto__");
/** Strings with what JSON escapes: quotes, backslashes, control characters, lone and paired surrogates. */
const text = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: "binary-ascii" }),
  fc.string({
    unit: fc.constantFrom(
      '"',
      "\\",
      "\u0000",
      "\u001f",
      "\u007f",
      "\u2028",
      "\ud800",
      "\udc00",
      "\ud83d\ude00",
      "é",
      "a",
    ),
  }),
);
const flatValue = fc.oneof(
  text,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 1e21, 5e-324),
  fc.boolean(),
  fc.constant(undefined),
);

describe("auditEntryJson()", () => {
  it("writes the RFC 8785 text canonicalJson writes, for any flat record", () => {
    fc.assert(
      fc.property(fc.dictionary(key, flatValue, { maxKeys: 12 }), (record) => {
        expect(auditEntryJson(record)).toBe(canonicalJson(withoutUndefined(record)));
      }),
      { numRuns: 3000 },
    );
  });

  it("leaves anything else to canonicalJson: the same text, or the same refusal", () => {
    const other = fc.oneof(
      fc.constant(null),
      fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY),
      fc.dictionary(text, text, { maxKeys: 2 }),
      fc.array(flatValue, { maxLength: 2 }),
    );
    fc.assert(
      fc.property(fc.dictionary(key, flatValue, { maxKeys: 6 }), key, other, (record, k, v) => {
        const fields = { ...record, [k]: v };
        let expected: string | undefined;
        try {
          expected = canonicalJson(withoutUndefined(fields));
        } catch {
          expected = undefined;
        }
        if (expected === undefined) expect(() => auditEntryJson(fields)).toThrow();
        else expect(auditEntryJson(fields)).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it("leaves out fields holding undefined and orders keys by UTF-16 code units", () => {
    expect(
      auditEntryJson({ b: 1, a: "x", é: true, Z: undefined, "\u{1F600}": "s", "\uFFFF": 0 }),
    ).toBe('{"a":"x","b":1,"é":true,"\u{1F600}":"s","\uFFFF":0}');
  });
});
