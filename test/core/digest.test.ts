import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nativeSha256Hex } from "../../src/authority/sha256.js";
import {
  argumentsDigest,
  callDigest,
  callDigests,
  canonicalJson,
  sha256Hex,
  type JsonValue,
} from "../../src/core/index.js";
import { hostileArgumentsArb, jsonArb } from "../support/arbitraries.js";

/** The IEEE-754 double with these 64 bits (big-endian hex), as RFC 8785 appendix B lists them. */
function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe("canonicalJson() (RFC 8785)", () => {
  it("serializes the example of RFC 8785 §3.2.4", () => {
    const input = JSON.parse(String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`) as JsonValue;
    expect(canonicalJson(input)).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });

  it("sorts keys by UTF-16 code units, as in RFC 8785 §3.2.3 (not by code points)", () => {
    const input = JSON.parse(String.raw`{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }`) as JsonValue;
    // U+1F600 is the surrogate pair D83D DE00, which sorts before U+FB33 although its code point is larger.
    expect(canonicalJson(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it.each([
    ["0000000000000000", "0"],
    ["8000000000000000", "0"],
    ["0000000000000001", "5e-324"],
    ["8000000000000001", "-5e-324"],
    ["7fefffffffffffff", "1.7976931348623157e+308"],
    ["ffefffffffffffff", "-1.7976931348623157e+308"],
    ["4340000000000000", "9007199254740992"],
    ["c340000000000000", "-9007199254740992"],
    ["4430000000000000", "295147905179352830000"],
    ["44b52d02c7e14af5", "9.999999999999997e+22"],
    ["44b52d02c7e14af6", "1e+23"],
    ["44b52d02c7e14af7", "1.0000000000000001e+23"],
    ["444b1ae4d6e2ef4e", "999999999999999700000"],
    ["444b1ae4d6e2ef4f", "999999999999999900000"],
    ["444b1ae4d6e2ef50", "1e+21"],
    ["3eb0c6f7a0b5ed8c", "9.999999999999997e-7"],
    ["3eb0c6f7a0b5ed8d", "0.000001"],
    ["41b3de4355555553", "333333333.3333332"],
    ["41b3de4355555554", "333333333.33333325"],
    ["41b3de4355555555", "333333333.3333333"],
    ["41b3de4355555556", "333333333.3333334"],
    ["41b3de4355555557", "333333333.33333343"],
    ["becbf647612f3696", "-0.0000033333333333333333"],
    ["43143ff3c1cb0959", "1424953923781206.2"],
  ])("formats the double 0x%s as %s (RFC 8785 appendix B)", (bits, text) => {
    expect(canonicalJson(fromBits(bits))).toBe(text);
  });

  it.each([
    [1.0, "1"],
    [-0, "0"],
    [1e21, "1e+21"],
    [1e20, "100000000000000000000"],
    [0.000001, "0.000001"],
    [1e-7, "1e-7"],
    [123456789012345680000, "123456789012345680000"],
    [2 ** 53 + 2, "9007199254740994"],
    [-1.5e-10, "-1.5e-10"],
  ])("formats %s as %s", (value, text) => {
    expect(canonicalJson(value)).toBe(text);
    expect(canonicalJson([value])).toBe(`[${text}]`);
  });

  it("escapes control characters as lower-case \\u00XX, with the short forms where JSON has them", () => {
    const all = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)).join("");
    expect(canonicalJson(all)).toBe(
      '"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f' +
        '\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f"',
    );
  });

  it("leaves U+2028, U+2029, DEL, '/', non-ASCII and unnormalized text as they are", () => {
    expect(canonicalJson("\u2028\u2029\u007f/é\u0041\u030a\ud83d\ude00")).toBe(
      '"\u2028\u2029\u007f/é\u0041\u030a\ud83d\ude00"',
    );
    expect(canonicalJson('"\\')).toBe('"\\"\\\\"');
  });

  it("sorts keys at every depth and keeps array order", () => {
    const input = JSON.parse(`{
      "1": {"f": {"f": "hi", "F": 5}, "\\n": 56.0},
      "10": {},
      "": "empty",
      "a": {},
      "111": [{"e": "yes", "E": "no"}],
      "A": {}
    }`) as JsonValue;
    expect(canonicalJson(input)).toBe(
      '{"":"empty","1":{"\\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{"E":"no","e":"yes"}],"A":{},"a":{}}',
    );
    expect(canonicalJson([56, { d: true, 10: null, 1: [] }])).toBe(
      '[56,{"1":[],"10":null,"d":true}]',
    );
    expect(canonicalJson([[3, [2, 1]], [], {}])).toBe("[[3,[2,1]],[],{}]");
  });

  it("gives the same text for any key order", () => {
    fc.assert(
      fc.property(jsonArb(), (value) => {
        expect(canonicalJson(reversedKeys(value))).toBe(canonicalJson(value));
      }),
      { numRuns: 300 },
    );
  });

  it("is JSON that parses back to an equal value", () => {
    fc.assert(
      fc.property(jsonArb(), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(JSON.parse(text) as JsonValue)).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it("refuses values JSON cannot represent", () => {
    expect(() => canonicalJson(Number.NaN)).toThrow("NaN is not allowed");
    expect(() => canonicalJson({ a: [Number.POSITIVE_INFINITY] })).toThrow(
      "Infinity is not allowed",
    );
    expect(() => canonicalJson(undefined)).toThrow(
      new TypeError("value has no JSON representation"),
    );
  });
});

/** The same JSON value with every object's keys inserted in reverse order. */
function reversedKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value !== null && typeof value === "object") {
    // fromEntries defines own properties, so a "__proto__" key stays a key.
    return Object.fromEntries(
      Object.keys(value)
        .reverse()
        .map((key) => [key, reversedKeys(value[key] as JsonValue)]),
    );
  }
  return value;
}

describe("sha256Hex()", () => {
  it("matches the FIPS 180-2 test vectors", () => {
    expect(sha256Hex("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("hashes the UTF-8 bytes of the text", () => {
    const text = "Grüße € \ud83d\ude00";
    expect(sha256Hex(text)).toBe(
      createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex"),
    );
  });
});

describe("callDigest()", () => {
  const args = { to: "bob@example.com", subject: "Hi", body: "Grüße €", n: 1.0, tags: ["b", "a"] };

  it("is sha256 over the canonical {actionId, arguments, grantId} text", () => {
    const canonical =
      '{"actionId":"email.send","arguments":{"body":"Grüße €","n":1,"subject":"Hi","tags":["b","a"],"to":"bob@example.com"},"grantId":"g-1"}';
    const expected = createHash("sha256").update(canonical, "utf8").digest("hex");
    expect(callDigest("g-1", "email.send", args)).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it("does not depend on the order of argument keys", () => {
    const reordered = {
      tags: ["b", "a"],
      n: 1,
      body: "Grüße €",
      subject: "Hi",
      to: "bob@example.com",
    };
    expect(callDigest("g-1", "email.send", reordered)).toBe(callDigest("g-1", "email.send", args));
    fc.assert(
      fc.property(fc.dictionary(fc.string(), jsonArb({ maxDepth: 3 })), (a) => {
        expect(callDigest("g", "x.y", reversedKeys(a))).toBe(callDigest("g", "x.y", a));
      }),
      { numRuns: 300 },
    );
  });

  it("changes with the grant id, the action id, and any argument value", () => {
    const base = callDigest("g-1", "email.send", args);
    expect(callDigest("g-2", "email.send", args)).not.toBe(base);
    expect(callDigest("g-1", "email.read", args)).not.toBe(base);
    expect(callDigest("g-1", "email.send", { ...args, to: "eve@example.com" })).not.toBe(base);
    expect(callDigest("g-1", "email.send", { ...args, n: 2 })).not.toBe(base);
    expect(callDigest("g-1", "email.send", { ...args, n: "1" })).not.toBe(base);
    expect(callDigest("g-1", "email.send", { ...args, tags: ["a", "b"] })).not.toBe(base);
    expect(callDigest("g-1", "email.send", { ...args, extra: null })).not.toBe(base);
    const { body: _body, ...withoutBody } = args;
    expect(callDigest("g-1", "email.send", withoutBody)).not.toBe(base);
  });

  it("changes when any one argument changes value", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 4 }), jsonArb({ maxDepth: 2 }), { minKeys: 1 }),
        fc.nat(),
        jsonArb({ maxDepth: 2 }),
        (a, pick, replacement) => {
          const keys = Object.keys(a);
          const key = keys[pick % keys.length] as string;
          fc.pre(canonicalJson(replacement) !== canonicalJson(a[key]));
          const changed = { ...a, [key]: replacement };
          expect(callDigest("g", "x.y", changed)).not.toBe(callDigest("g", "x.y", a));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps ids and arguments apart: no id can be shifted into the arguments", () => {
    expect(callDigest("g", "a", { b: 1 })).not.toBe(callDigest("g", 'a","b', {}));
    expect(callDigest("g-1", "x", {})).not.toBe(callDigest("g", "-1x", {}));
  });
});

describe("callDigests()", () => {
  // What the call digest was before the arguments' canonical text was shared: one serialization of the whole object.
  const wholeText = (grantId: string, actionId: string, args: unknown) =>
    sha256Hex(canonicalJson({ grantId, actionId, arguments: args }));
  const anyArgs = fc.oneof(jsonArb({ maxDepth: 3 }), hostileArgumentsArb, fc.constant(undefined));

  it("gives exactly the digests of the whole canonical object, for any arguments (undefined and non-JSON values included)", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), anyArgs, (grantId, actionId, args) => {
        const expected = (() => {
          try {
            return wholeText(grantId, actionId, args);
          } catch {
            return "throws";
          }
        })();
        const digests = callDigests(args);
        const got = (() => {
          try {
            return digests.call(grantId, actionId);
          } catch {
            return "throws";
          }
        })();
        expect(got).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it("shares the arguments' canonical text between the call digest and the arguments digest", () => {
    fc.assert(
      fc.property(jsonArb({ maxDepth: 3 }), (args) => {
        const digests = callDigests(args);
        expect(digests.arguments()).toBe(argumentsDigest(args));
        expect(digests.arguments()).toBe(sha256Hex(canonicalJson(args)));
        expect(digests.call("g", "a")).toBe(wholeText("g", "a", args));
        expect(digests.call("g", "b")).toBe(wholeText("g", "b", args));
      }),
      { numRuns: 300 },
    );
  });

  it("gives the same values with the native hash the server passes", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), jsonArb({ maxDepth: 2 }), (text, args) => {
        expect(nativeSha256Hex(text)).toBe(sha256Hex(text));
        expect(callDigests(args, nativeSha256Hex).call("g", "a")).toBe(callDigest("g", "a", args));
      }),
      { numRuns: 500 },
    );
    // Lone surrogates are encoded as U+FFFD by both.
    expect(nativeSha256Hex("\ud800x\udc00")).toBe(sha256Hex("\ud800x\udc00"));
  });
});
