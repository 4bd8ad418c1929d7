import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { canonicalJson } from "./digest.js";
import { isJsonObject, type JsonSchema, type JsonValue } from "./json.js";

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
}

/** Bound on remembered schemas compiled outside load time (from delegated grants). */
const MAX_CACHED = 4096;

/** Creates a compiler whose results are cached by schema identity and by canonical text. */
export function createSchemaCompiler(): SchemaCompiler {
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
  });
  addFormats(ajv);
  const byObject = new WeakMap<object, CompiledSchema>();
  const byText = new Map<string, CompiledSchema>();

  return {
    compile(schema) {
      if (typeof schema === "object") {
        const known = byObject.get(schema);
        if (known) return known;
      }
      const key = canonicalJson(schema);
      let compiled = byText.get(key);
      if (!compiled) {
        compiled = wrap(schema, ajv.compile(schema));
        if (byText.size >= MAX_CACHED) {
          // Evict the oldest, from ajv's own cache too, so memory stays bounded.
          const [oldestKey, oldest] = byText.entries().next().value as [string, CompiledSchema];
          byText.delete(oldestKey);
          if (typeof oldest.schema === "object") ajv.removeSchema(oldest.schema);
        }
        byText.set(key, compiled);
      }
      if (typeof schema === "object") byObject.set(schema, compiled);
      return compiled;
    },
  };
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
  return { pointer: error.instancePath === "" ? "/" : error.instancePath, keyword: error.keyword, detail: describe(error) };
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
export function acceptsValue(schemas: SchemaCompiler, schema: JsonValue, value: JsonValue): boolean {
  if (typeof schema === "boolean") return schema;
  if (!isJsonObject(schema) || JSON.stringify(schema).includes('"$ref"')) return true;
  try {
    return schemas.compile(schema).check(value).length === 0;
  } catch {
    return true;
  }
}
