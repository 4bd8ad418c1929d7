import { skipContainer, skipWs, utf8Length } from "./json-scan.js";
import { setOwn, type JsonObject, type JsonValue } from "./json.js";

/** Bounds on a JSON text: its size in UTF-8 bytes and how deeply arrays and objects nest. */
export interface JsonLimits {
  readonly maxBytes: number;
  readonly maxDepth: number;
}

/** Why a text is refused; the message names the problem and a position, never a value. */
export type StrictJsonProblem =
  | "too_large"
  | "too_deep"
  | "bom"
  | "duplicate_key"
  | "lone_surrogate"
  | "number_out_of_range"
  | "syntax";

/** The parsed value, or the problem and a message for the model. */
export type StrictJsonResult =
  | { readonly ok: true; readonly value: JsonValue }
  | { readonly ok: false; readonly problem: StrictJsonProblem; readonly message: string };

/** A container being filled (opened at `start`): an array, or an object with the key awaiting its value. */
type Frame =
  | { readonly kind: "array"; readonly value: JsonValue[]; readonly start: number }
  | {
      readonly kind: "object";
      readonly value: JsonObject;
      readonly start: number;
      key: string | undefined;
    };

/** A problem a strict parse refuses, found at `at` by a collecting parse. */
export interface CollectedProblem {
  readonly problem: "duplicate_key" | "lone_surrogate" | "number_out_of_range" | "too_deep";
  readonly message: string;
  readonly at: number;
}

/** What a document parse collects as it goes; absent, the parse refuses at the first problem. */
export interface Collector {
  readonly problems: CollectedProblem[];
  readonly spans: WeakMap<object, readonly [number, number]>;
}

/** Thrown inside the parser only; `parseStrictJson` turns it into a result. */
class Refusal extends Error {
  constructor(
    readonly problem: StrictJsonProblem,
    message: string,
  ) {
    super(message);
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const SURROGATE = /[\ud800-\udfff]/;
const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/**
 * Parses RFC 8259 JSON strictly and without recursion (an explicit stack, so no depth can overflow
 * the JS stack): it refuses a leading byte order mark, a key repeated in one object (at any depth),
 * lone surrogates (escaped or raw), numbers outside the IEEE-754 double range (`1e400`), and
 * texts over `limits`. For any other text it answers what `JSON.parse` answers. Total: it never throws.
 */
export function parseStrictJson(text: string, limits: JsonLimits): StrictJsonResult {
  try {
    checkText(text, limits);
    return { ok: true, value: parse(text, limits.maxDepth) };
  } catch (err) {
    return refusalOf(err);
  }
}

/**
 * `parseStrictJson` for `parseJsonDocument`: the problems it would refuse are collected instead
 * (a syntax error, a BOM and a text over the limits are still refused), and every object's and
 * array's span is recorded. Total: it never throws.
 */
export function parseCollecting(
  text: string,
  limits: JsonLimits,
  collector: Collector,
): StrictJsonResult {
  try {
    checkText(text, limits);
    return { ok: true, value: parse(text, limits.maxDepth, collector) };
  } catch (err) {
    return refusalOf(err);
  }
}

/** Refuses a text over the size limit or one that starts with a byte order mark. */
function checkText(text: string, limits: JsonLimits): void {
  if (utf8Length(text, limits.maxBytes) > limits.maxBytes)
    throw new Refusal("too_large", `the text is larger than ${limits.maxBytes} bytes`);
  if (text.charCodeAt(0) === 0xfeff)
    throw new Refusal("bom", "the text starts with a byte order mark (U+FEFF)");
}

function refusalOf(err: unknown): { ok: false; problem: StrictJsonProblem; message: string } {
  if (err instanceof Refusal) return { ok: false, problem: err.problem, message: err.message };
  return { ok: false, problem: "syntax", message: "the text cannot be parsed" };
}

/** Refuses (strict parse) or collects (document parse) a problem found at `at`. */
function problemAt(
  collector: Collector | undefined,
  problem: CollectedProblem["problem"],
  message: string,
  at: number,
): void {
  if (!collector) throw new Refusal(problem, message);
  collector.problems.push({ problem, message, at });
}

function parse(text: string, maxDepth: number, collector?: Collector): JsonValue {
  const stack: Frame[] = [];
  let i = skipWs(text, 0);
  let result: JsonValue | undefined;
  let done = false;
  const syntax = (what: string): never => {
    throw new Refusal("syntax", `the text is not valid JSON (${what} at position ${i})`);
  };

  while (!done) {
    // Read one value (opening a container pushes a frame and reads its first member or end).
    let value: JsonValue | undefined;
    const c = text[i];
    if (c === "{" || c === "[") {
      const start = i;
      if (stack.length >= maxDepth) {
        problemAt(collector, "too_deep", `the value nests deeper than ${maxDepth} levels`, i);
        // Collected: the container is skipped whole and stands as an empty one.
        i = skipContainer(text, i, syntax);
        value = c === "[" ? [] : {};
        collector?.spans.set(value, [start, i]);
      } else {
        i = skipWs(text, i + 1);
        if (c === "[") {
          if (text[i] !== "]") {
            stack.push({ kind: "array", value: [], start });
            continue;
          }
          i += 1;
          value = [];
        } else if (text[i] === "}") {
          i += 1;
          value = {};
        } else {
          const frame: Frame = { kind: "object", value: {}, start, key: undefined };
          stack.push(frame);
          i = readKey(text, i, frame, syntax, collector);
          continue;
        }
        collector?.spans.set(value, [start, i]);
      }
    } else if (c === '"') {
      const s = readString(text, i, syntax, collector);
      value = s.value;
      i = s.end;
    } else if (c === "t" && text.startsWith("true", i)) {
      value = true;
      i += 4;
    } else if (c === "f" && text.startsWith("false", i)) {
      value = false;
      i += 5;
    } else if (c === "n" && text.startsWith("null", i)) {
      value = null;
      i += 4;
    } else {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m) return syntax("unexpected character");
      const n = Number(m[0]);
      if (Number.isFinite(n)) value = n;
      else {
        const message = `a number is outside the IEEE-754 double range (at position ${i})`;
        problemAt(collector, "number_out_of_range", message, i);
        value = null;
      }
      i += m[0].length;
    }

    // Place the value, then close every container that ends here.
    for (;;) {
      i = skipWs(text, i);
      const top = stack[stack.length - 1];
      if (!top) {
        result = value;
        done = true;
        break;
      }
      if (top.kind === "array") {
        top.value.push(value);
        if (text[i] === ",") {
          i = skipWs(text, i + 1);
          break;
        }
        if (text[i] !== "]") return syntax("expected , or ]");
      } else {
        setOwn(top.value, top.key as string, value);
        if (text[i] === ",") {
          i = readKey(text, skipWs(text, i + 1), top, syntax, collector);
          break;
        }
        if (text[i] !== "}") return syntax("expected , or }");
      }
      i += 1;
      stack.pop();
      value = top.value;
      collector?.spans.set(value, [top.start, i]);
    }
  }
  if (i !== text.length) syntax("unexpected text after the value");
  return result as JsonValue;
}

/** Reads `"key" :` into the frame; a key already present in this object is refused. */
function readKey(
  text: string,
  at: number,
  frame: Frame & { kind: "object" },
  syntax: (what: string) => never,
  collector: Collector | undefined,
): number {
  let i = at;
  if (text[i] !== '"') return syntax("expected a property name");
  const s = readString(text, i, syntax, collector);
  if (Object.hasOwn(frame.value, s.value)) {
    const message = `a property name is repeated in one object (at position ${i})`;
    problemAt(collector, "duplicate_key", message, i);
  }
  i = skipWs(text, s.end);
  if (text[i] !== ":") return syntax("expected :");
  frame.key = s.value;
  return skipWs(text, i + 1);
}

function readString(
  text: string,
  at: number,
  syntax: (what: string) => never,
  collector: Collector | undefined,
): { value: string; end: number } {
  let i = at + 1;
  let out = "";
  let run = i;
  for (;;) {
    if (i >= text.length) return syntax("unterminated string");
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      out += text.slice(run, i);
      checkSurrogates(out, at, collector);
      return { value: out, end: i + 1 };
    }
    if (code < 0x20) return syntax("control character in a string");
    if (code === 0x5c) {
      out += text.slice(run, i);
      const e = text[i + 1];
      if (e === "u") {
        const hex = text.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) return syntax("bad \\u escape");
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
      } else {
        const mapped = e === undefined ? undefined : ESCAPES[e];
        if (mapped === undefined) return syntax("bad escape");
        out += mapped;
        i += 2;
      }
      run = i;
      continue;
    }
    i += 1;
  }
}

/** Refuses a string holding a surrogate code unit without its pair (from an escape or raw). */
function checkSurrogates(s: string, at: number, collector: Collector | undefined): void {
  if (!SURROGATE.test(s)) return;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    const next = s.charCodeAt(i + 1);
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      i += 1;
      continue;
    }
    const message = `a string holds a lone surrogate (at position ${at})`;
    // One problem per string is enough: a collecting parse stops looking there.
    problemAt(collector, "lone_surrogate", message, at);
    return;
  }
}
