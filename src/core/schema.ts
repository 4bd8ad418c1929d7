import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import type { DataValidationCxt } from "ajv/dist/types/index.js";
import addFormatsModule from "ajv-formats";
import { canonicalJson } from "./digest.js";
import { isJsonObject, type JsonSchema, type JsonValue } from "./json.js";
import { isPatternError, linearRegExp, patternPointer } from "./linear-regexp.js";
import { canonicalPathProblem, PATH_WITHIN, pathProblem } from "./path-within.js";

// ajv-formats ships CommonJS with an ES-style declaration; at run time the default import is the plugin.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** A compiled JSON Schema: `check` answers with problems that never quote the instance's values. */
export interface CompiledSchema {
  readonly schema: JsonSchema;
  check(instance: unknown): SchemaProblem[];
}

/** One way an instance fails a schema: where (a JSON pointer) and which keyword. */
export interface SchemaProblem {
  readonly pointer: string;
  readonly keyword: string;
  /** A short explanation built from the schema, never from the instance's values. */
  readonly detail: string;
}

/**
 * Compiles schemas once and remembers them. Draft 2020-12 in ajv strict mode: an unknown keyword
 * or format is a compile error, so a typo in a policy is found at load time, not as a silent
 * mismatch later.
 */
export interface SchemaCompiler {
  compile(schema: JsonSchema): CompiledSchema;
  /** Validators held now (both generations) and compile calls answered from them or not, for metrics. */
  stats(): { readonly entries: number; readonly hits: number; readonly misses: number };
}

/** Schemas one generation of compiled validators holds by default (see `createSchemaCompiler`). */
export const DEFAULT_SCHEMAS_PER_GENERATION = 2048;

/** How a compiler bounds what it remembers. */
export interface SchemaCompilerOptions {
  /** Schemas one generation holds (default 2,048); also bounded by 256 bytes of schema text per schema on average. */
  readonly schemasPerGeneration?: number;
}

/** One ajv instance and what it compiled; dropped whole, so ajv's internal references go with it. */
interface Generation {
  readonly ajv: Ajv2020;
  readonly byObject: WeakMap<object, CompiledSchema>;
  readonly byText: Map<string, CompiledSchema>;
  textBytes: number;
}

/**
 * Creates a compiler whose results are cached by schema identity and by canonical text, in
 * generations: when the current generation is full (by count, or by the size of the schema text it
 * compiled), it becomes the previous one and a fresh ajv instance starts; the generation before is
 * dropped whole. ajv keeps every compiled function and its references in its own scope for as long
 * as the instance lives (removeSchema does not release them), so dropping instances is the only
 * way memory stays bounded: at most two generations, plus validators still held elsewhere (a
 * loaded catalog's input schemas keep the generation they were compiled in).
 */
export function createSchemaCompiler(options: SchemaCompilerOptions = {}): SchemaCompiler {
  const perGeneration = options.schemasPerGeneration ?? DEFAULT_SCHEMAS_PER_GENERATION;
  const maxTextBytes = perGeneration * 256;
  let current = newGeneration();
  let previous: Generation | undefined;
  let calls = 0;
  let misses = 0;

  return {
    stats: () => ({
      entries: current.byText.size + (previous?.byText.size ?? 0),
      hits: calls - misses,
      misses,
    }),
    compile(schema) {
      const asObject = typeof schema === "object" ? schema : undefined;
      const hit =
        (asObject && (current.byObject.get(asObject) ?? previous?.byObject.get(asObject))) ||
        undefined;
      calls += 1;
      if (hit) return hit;
      const key = canonicalJson(schema);
      let compiled = current.byText.get(key);
      const older = compiled ? undefined : previous?.byText.get(key);
      // Only the generation that compiled a validator indexes it, so no generation pins an older one.
      if (older) return older;
      if (!compiled) {
        misses += 1;
        if (current.byText.size >= perGeneration || current.textBytes + key.length > maxTextBytes) {
          previous = current;
          current = newGeneration();
        }
        compiled = wrap(schema, compileWith(current.ajv, schema));
        current.byText.set(key, compiled);
        current.textBytes += key.length;
      }
      if (asObject) current.byObject.set(asObject, compiled);
      return compiled;
    },
  };
}

/** ajv's compile; a pattern it refuses names its place in the schema (`/properties/to/pattern: …`). */
function compileWith(ajv: Ajv2020, schema: JsonSchema): ValidateFunction {
  try {
    return ajv.compile(schema);
  } catch (err) {
    if (!isPatternError(err)) throw err;
    const at = patternPointer(schema, err.pattern);
    throw new Error(at === undefined ? err.message : `${at}: ${err.message}`, { cause: err });
  }
}

function newGeneration(): Generation {
  return { ajv: newAjv(), byObject: new WeakMap(), byText: new Map(), textBytes: 0 };
}

function newAjv(): Ajv2020 {
  // strictSchema (unknown keywords, formats) and strictNumbers stay on; strictTypes would force
  // policy authors to repeat `type` beside every keyword of a rule's `when`, so it is off.
  const ajv = new Ajv2020({
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    // The first failing keyword stops the check: no unbounded error collection on hostile arguments.
    allErrors: false,
    validateFormats: true,
    // A schema's $id is not registered: one grant's schema cannot collide with another's.
    addUsedSchema: false,
    logger: false,
    // Patterns run in linear time (RE2), never on V8's backtracking engine; see linear-regexp.ts.
    code: { regExp: linearRegExp },
  });
  addFormats(ajv);
  addPathWithin(ajv);
  return ajv;
}

/**
 * Registers `pathWithin: "<root>"` (see `path-within.ts`): the root must itself be a canonical
 * absolute path, or the schema does not compile (a policy load error). Every other unknown keyword
 * stays a compile error.
 */
function addPathWithin(ajv: Ajv2020): void {
  ajv.addKeyword({
    keyword: PATH_WITHIN,
    type: "string",
    schemaType: "string",
    errors: true,
    compile(root: string) {
      const bad = canonicalPathProblem(root);
      if (bad !== undefined) throw new Error(`${PATH_WITHIN} root ${JSON.stringify(root)} ${bad}`);
      // ajv passes the data's place to a compiled keyword: the error names the argument, e.g. /path.
      const check = (data: string, cxt?: DataValidationCxt): boolean => {
        const problem = pathProblem(data, root);
        if (problem === undefined) return true;
        check.errors = [
          {
            keyword: PATH_WITHIN,
            instancePath: cxt?.instancePath ?? "",
            schemaPath: "",
            params: { root, problem },
            message: problem,
          },
        ];
        return false;
      };
      check.errors = [] as ErrorObject[];
      return check;
    },
  });
}

function wrap(schema: JsonSchema, validate: ValidateFunction): CompiledSchema {
  return {
    schema,
    check(instance) {
      if (validate(instance)) return [];
      return (validate.errors ?? []).map(toProblem);
    },
  };
}

function toProblem(error: ErrorObject): SchemaProblem {
  return {
    pointer: error.instancePath === "" ? "/" : error.instancePath,
    keyword: error.keyword,
    detail: describe(error),
  };
}

/** Explains a failed keyword from the schema side only: the instance's values never appear. */
function describe(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `missing required property ${quote(p["missingProperty"])}`;
    case "additionalProperties":
      return `property ${quote(p["additionalProperty"])} is not allowed`;
    case "type":
      return `must be of type ${String(p["type"])}`;
    case "format":
      return `must match format ${quote(p["format"])}`;
    case "pattern":
      return `must match pattern ${quote(p["pattern"])}`;
    case "enum":
      return "must be one of the allowed values";
    case "const":
      return "must equal the required value";
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return `must be ${String(p["comparison"])} ${String(p["limit"])}`;
    case PATH_WITHIN:
      return `must be a canonical path within ${quote(p["root"])}: it ${String(p["problem"])}`;
    case "minLength":
    case "maxLength":
    case "minItems":
    case "maxItems":
    case "minProperties":
    case "maxProperties":
      return `violates ${error.keyword} ${String(p["limit"])}`;
    default:
      return `fails "${error.keyword}"`;
  }
}

/** JSON-quotes a name, cut to 64 characters so that a hostile key cannot flood a message. */
function quote(value: unknown): string {
  const text = String(value);
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
}

/** Renders problems as one line: `/to: must match format "email"; /: missing required property "subject"`. */
export function formatProblems(problems: readonly SchemaProblem[], max = 5): string {
  const shown = problems.slice(0, max).map((p) => `${p.pointer}: ${p.detail}`);
  if (problems.length > max) shown.push(`and ${problems.length - max} more`);
  return shown.join("; ");
}

/**
 * Whether a value satisfies a schema on its own (e.g. a property's schema, compiled standalone).
 * A schema with references, or one that does not compile standalone, gets the benefit of the
 * doubt: callers use this to find impossibilities, never to grant anything.
 */
export function acceptsValue(
  schemas: SchemaCompiler,
  schema: JsonValue,
  value: JsonValue,
): boolean {
  if (typeof schema === "boolean") return schema;
  if (!isJsonObject(schema) || JSON.stringify(schema).includes('"$ref"')) return true;
  try {
    return schemas.compile(schema).check(value).length === 0;
  } catch {
    return true;
  }
}
