import {
  isJsonObject,
  jsonEqual,
  setOwn,
  type JsonObject,
  type JsonSchema,
  type JsonValue,
} from "./json.js";
import { PATH_WITHIN } from "./path-within.js";

// Candidate values for one argument, read from every schema that speaks about it (the tool's
// property schema, the policy's constraints and rule conditions): each enum member and const, the
// boundaries of each numeric bound (100 gives 99, 100 and 101), a string matching each pattern
// and one that does not, a sample of each format. Pure and deterministic; the caller keeps only
// the values its checks accept.

/** Most candidates kept for one argument. */
export const MAX_CANDIDATES = 24;

const FORMAT_SAMPLES: Readonly<Record<string, string>> = {
  email: "user@example.org",
  "idn-email": "user@example.org",
  uri: "https://example.org/",
  "uri-reference": "https://example.org/",
  iri: "https://example.org/",
  url: "https://example.org/",
  hostname: "example.org",
  "date-time": "2026-01-01T00:00:00Z",
  date: "2026-01-01",
  time: "00:00:00Z",
  duration: "P1D",
  uuid: "00000000-0000-4000-8000-000000000000",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
};

// Lower bounds first: the base call takes the first value that fits, and a small one is the plausible one.
const NUMERIC_BOUNDS = ["minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"] as const;

/** Candidate values for an argument the schemas describe, most plausible first (the first schema's). */
export function candidateValues(schemas: readonly JsonSchema[], depth = 0): JsonValue[] {
  const out: JsonValue[] = [];
  const add = (v: JsonValue | undefined) => {
    if (v !== undefined && !out.some((o) => jsonEqual(o, v))) out.push(v);
  };
  const types = new Set<string>();
  for (const s of schemas) collectTypes(s, types);
  for (const s of schemas) hints(s, add, types, depth);
  if (out.length === 0 || types.size > 0) for (const v of fillers(types, schemas, depth)) add(v);
  return out.slice(0, MAX_CANDIDATES);
}

function collectTypes(schema: JsonSchema, types: Set<string>): void {
  if (!isJsonObject(schema)) return;
  const t = schema["type"];
  if (typeof t === "string") types.add(t);
  else if (Array.isArray(t)) for (const x of t) if (typeof x === "string") types.add(x);
}

/** Values a schema itself names or bounds: const, enum, examples, numeric bounds, patterns, formats. */
function hints(
  schema: JsonSchema,
  add: (v: JsonValue | undefined) => void,
  types: ReadonlySet<string>,
  depth: number,
): void {
  if (!isJsonObject(schema)) return;
  add(schema["const"]);
  const list = schema["enum"];
  if (Array.isArray(list)) for (const v of list) add(v);
  for (const key of ["default", "examples"] as const) {
    const v = schema[key];
    if (key === "examples" && Array.isArray(v)) for (const e of v) add(e);
    else add(v);
  }
  const integer = types.has("integer") && !types.has("number");
  for (const key of NUMERIC_BOUNDS) {
    const v = schema[key];
    if (typeof v !== "number") continue;
    const step = integer || Number.isInteger(v) ? 1 : Math.abs(v) / 100 || 0.01;
    add(v - step);
    add(v);
    add(v + step);
  }
  const pattern = schema["pattern"];
  if (typeof pattern === "string") for (const s of patternSamples(pattern)) add(s);
  const format = schema["format"];
  if (typeof format === "string") add(FORMAT_SAMPLES[format]);
  const root = schema[PATH_WITHIN];
  if (typeof root === "string") {
    add(`${root.replace(/\/$/, "")}/sample.txt`);
    add("/outside/sample.txt");
  }
  for (const key of ["minLength", "maxLength"] as const) {
    const n = schema[key];
    if (typeof n === "number" && n <= 64) for (const k of [n - 1, n, n + 1]) add(lengthString(k));
  }
  for (const key of ["not", "if", "then", "else"] as const) {
    const sub = schema[key];
    if (sub !== undefined) hints(sub as JsonSchema, add, types, depth);
  }
  for (const key of ["allOf", "anyOf", "oneOf"] as const) {
    const subs = schema[key];
    if (Array.isArray(subs)) for (const sub of subs) hints(sub as JsonSchema, add, types, depth);
  }
  if (types.has("array") || schema["items"] !== undefined) arrayHints(schema, add, depth);
}

function lengthString(n: number): string | undefined {
  return n < 0 ? undefined : "a".repeat(n);
}

/** Arrays of the items' candidates: each alone, and at the bounds of minItems / maxItems. */
function arrayHints(
  schema: Readonly<Record<string, JsonValue>>,
  add: (v: JsonValue | undefined) => void,
  depth: number,
): void {
  const items = schema["items"];
  if (items === undefined || depth > 2) return;
  const values = candidateValues([items as JsonSchema], depth + 1);
  for (const v of values.slice(0, 8)) add([v]);
  for (const key of ["minItems", "maxItems"] as const) {
    const n = schema[key];
    if (typeof n !== "number" || n > 32) continue;
    for (const k of [n - 1, n, n + 1])
      if (k >= 0)
        add(Array.from({ length: k }, (_, i) => values[i % Math.max(1, values.length)] ?? ""));
  }
}

/** Plain values of each type the schemas allow, for arguments no schema names a value for. */
function fillers(
  types: ReadonlySet<string>,
  schemas: readonly JsonSchema[],
  depth: number,
): JsonValue[] {
  const all = types.size === 0 ? new Set(["string", "number", "boolean"]) : types;
  const out: JsonValue[] = [];
  if (all.has("string")) out.push("sample");
  if (all.has("integer") || all.has("number")) out.push(1, 0);
  if (all.has("boolean")) out.push(true, false);
  if (all.has("null")) out.push(null);
  if (all.has("array")) out.push([]);
  if (all.has("object") && depth <= 2) out.push(minimalObject(schemas, depth + 1));
  return out;
}

/** An object with each required property of the first object schema set to its first candidate. */
function minimalObject(schemas: readonly JsonSchema[], depth: number): JsonValue {
  const out: JsonObject = {};
  const schema = schemas.find(isJsonObject);
  if (schema === undefined) return out;
  const props = isJsonObject(schema["properties"]) ? schema["properties"] : {};
  const required = Array.isArray(schema["required"]) ? schema["required"] : [];
  for (const name of required) {
    if (typeof name !== "string") continue;
    const sub = Object.hasOwn(props, name) ? (props[name] as JsonSchema) : true;
    const [first] = candidateValues([sub], depth);
    if (first !== undefined) setOwn(out, name, first);
  }
  return out;
}

/**
 * Strings a pattern matches, shortest first: the minimal match of a simple regular expression
 * (literals, escapes, classes, groups, alternatives, quantifiers), alone and with text around it
 * where the pattern is not anchored. Nothing for a pattern outside that subset.
 */
export function patternSamples(pattern: string): string[] {
  const start = pattern.startsWith("^");
  const end = pattern.endsWith("$") && !pattern.endsWith("\\$");
  const body = pattern.slice(start ? 1 : 0, end ? -1 : undefined);
  const core = minimalMatch(body);
  if (core === undefined) return [];
  const out = [core];
  if (!start) out.push(`user${core}`);
  if (!end) out.push(`${core}example.org/`);
  if (!start && !end) out.push(`user${core}example.org/`);
  return out;
}

const CLASS_ESCAPES: Readonly<Record<string, string>> = {
  d: "0",
  w: "a",
  s: " ",
  D: "a",
  W: "-",
  S: "a",
};

/** The shortest string `source` matches, or undefined when it uses more than the subset read here. */
function minimalMatch(source: string): string | undefined {
  let i = 0;
  const atom = (): string | undefined => {
    const c = source[i];
    if (c === undefined) return undefined;
    if (c === "\\") {
      const e = source[i + 1];
      i += 2;
      if (e === undefined) return undefined;
      if (Object.hasOwn(CLASS_ESCAPES, e)) return CLASS_ESCAPES[e];
      return /[A-Za-z0-9]/.test(e) ? undefined : e;
    }
    if (c === "[") return charClass();
    if (c === "(") {
      i += source.startsWith("(?:", i) ? 3 : 1;
      const inner = alternatives();
      if (source[i] !== ")") return undefined;
      i += 1;
      return inner;
    }
    if (c === ".") {
      i += 1;
      return "a";
    }
    if ("*+?{}|)^$".includes(c)) return undefined;
    i += 1;
    return c;
  };
  const charClass = (): string | undefined => {
    const close = source.indexOf("]", i + 2);
    if (close < 0) return undefined;
    const inside = source.slice(i + 1, close);
    i = close + 1;
    if (inside.startsWith("^")) {
      const excluded = inside.slice(1);
      return ["a", "0", "_", "x", "Z"].find((ch) => !excluded.includes(ch));
    }
    if (inside.startsWith("\\")) return CLASS_ESCAPES[inside[1] ?? ""] ?? inside[1];
    return inside[0];
  };
  const quantified = (): string | undefined => {
    const a = atom();
    if (a === undefined) return undefined;
    const q = source[i];
    let times = 1;
    if (q === "*" || q === "?") {
      times = 0;
      i += 1;
    } else if (q === "+") i += 1;
    else if (q === "{") {
      const m = /^\{(\d+)(,\d*)?\}/.exec(source.slice(i));
      if (m === null) return undefined;
      times = Number(m[1]);
      i += m[0].length;
    }
    if (source[i] === "?") i += 1;
    return times > 64 ? undefined : a.repeat(times);
  };
  const sequence = (): string | undefined => {
    let out = "";
    while (i < source.length && source[i] !== "|" && source[i] !== ")") {
      const part = quantified();
      if (part === undefined) return undefined;
      out += part;
    }
    return out;
  };
  const alternatives = (): string | undefined => {
    const first = sequence();
    while (source[i] === "|") {
      i += 1;
      if (sequence() === undefined) return undefined;
    }
    return first;
  };
  const result = alternatives();
  return i === source.length ? result : undefined;
}
