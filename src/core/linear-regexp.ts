import type { RegExpEngine, RegExpLike } from "ajv/dist/types/index.js";
import { RE2JS } from "re2js";

/**
 * The longest pattern accepted, in characters. RE2 matches in time proportional to the pattern's
 * size times the input's length; this cap (with the argument size limit) bounds one check, and
 * it bounds what compiling a pattern costs (re2js compiles about 30 µs per character at worst).
 */
export const MAX_PATTERN_LENGTH = 1024;

/**
 * Why a schema's pattern cannot be used: it is not an ECMA-262 regular expression, or it is one
 * the linear-time engine cannot run (a backreference, a lookaround). `pattern` is the text itself.
 */
export class PatternError extends Error {
  override readonly name = "PatternError";
  constructor(
    readonly pattern: string,
    readonly problem: string,
  ) {
    super(`pattern ${JSON.stringify(cut(pattern))} ${problem}`);
  }
}

export function isPatternError(err: unknown): err is PatternError {
  return err instanceof PatternError;
}

/**
 * ajv's `code.regExp`: every `pattern` and `patternProperties` key of a catalog, a policy or a
 * request runs on RE2 (re2js), whose matching time is linear in the input, never on V8's
 * backtracking engine. A pattern must be valid ECMA-262 (`u` mode, as JSON Schema 2020-12 and
 * ajv read it; checked by V8's parser, which compiles but never runs it) and RE2 must accept it;
 * otherwise `PatternError`. See docs/policy.md "Patterns".
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string): RegExpLike => {
    if (flags !== "u" && flags !== "") throw new PatternError(pattern, `has flags "${flags}"`);
    if (pattern.length > MAX_PATTERN_LENGTH)
      throw new PatternError(pattern, `is longer than ${MAX_PATTERN_LENGTH} characters`);
    try {
      new RegExp(pattern, "u");
    } catch (err) {
      throw new PatternError(pattern, `is not a regular expression: ${messageOf(err)}`);
    }
    let re: RE2JS;
    try {
      re = RE2JS.compile(RE2JS.translateRegExp(pattern));
    } catch (err) {
      throw new PatternError(
        pattern,
        `cannot run in linear time (RE2 has no backreferences or lookaround): ${messageOf(err)}`,
      );
    }
    // ajv keys its compiled patterns by toString(): one per pattern text.
    const compiled: RegExpLike & { toString(): string } = {
      test: (s) => re.test(s),
      toString: () => `/${pattern}/${flags}`,
    };
    return compiled;
  },
  { code: "linearRegExp" },
);

function messageOf(err: unknown): string {
  return cut(err instanceof Error ? err.message : String(err), 200);
}

function cut(text: string, max = 120): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Keywords whose value is a map from names (or patterns) to schemas, not a schema itself. */
const NAME_MAPS = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
]);
/** Keywords whose value is data, never a schema: a `pattern` inside them is not one. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples"]);

/**
 * The JSON pointer, within `schema`, of the first `pattern` keyword or `patternProperties` key
 * whose text is `pattern`: where a load error points. Undefined when it is not found.
 */
export function patternPointer(schema: unknown, pattern: string): string | undefined {
  const walk = (node: unknown, at: string, names: boolean): string | undefined => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) {
        const found = walk(item, `${at}/${i}`, false);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    if (node === null || typeof node !== "object") return undefined;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      const here = `${at}/${escapePointer(key)}`;
      if (!names && key === "pattern" && value === pattern) return here;
      if (!names && DATA_KEYWORDS.has(key)) continue;
      const isMap = !names && NAME_MAPS.has(key);
      if (isMap && key === "patternProperties" && value !== null && typeof value === "object") {
        if (Object.hasOwn(value, pattern)) return `${here}/${escapePointer(pattern)}`;
      }
      const found = walk(value, here, isMap);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return walk(schema, "", false);
}

function escapePointer(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}
