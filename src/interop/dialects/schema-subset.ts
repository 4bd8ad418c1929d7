import { isJsonObject, setOwn, type JsonObject, type JsonValue } from "../../core/json.js";

// Narrowing a schema for a grant (src/core/narrow.ts) adds `const` (a bound argument), `not` and
// `allOf` (a constraint the keyword merge could not fold in) and `false` (an argument no value can
// satisfy). Strict OpenAI tools and Gemini cannot express these. `expressible` rewrites them into
// what they can: a bound value becomes a typed one-value `enum`, and the rest is said in the
// description. The tool's own keywords are kept, so a value the schema accepts is never one that
// Authorize denies as INVALID_ARGUMENTS; what moved to words is still enforced by Authorize
// (CONSTRAINT_VIOLATION).

const MOVED = ["not", "allOf"] as const;

/** The schema with `const`, `not`, `allOf` and `false` properties rewritten as described above. */
export function expressible(schema: JsonObject): JsonObject {
  return rewrite(schema) as JsonObject;
}

function rewrite(schema: JsonValue): JsonValue {
  if (!isJsonObject(schema)) return schema;
  const out: JsonObject = {};
  const notes: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (key === "const") Object.assign(out, typedEnum(value, schema));
    else if ((MOVED as readonly string[]).includes(key)) notes.push(sayConstraint(key, value));
    else if (key === "properties" && isJsonObject(value)) {
      const properties: JsonObject = {};
      for (const [name, sub] of Object.entries(value)) {
        if (sub === false) notes.push(`The argument "${name}" cannot be used under this grant.`);
        else setOwn(properties, name, rewrite(sub));
      }
      out[key] = properties;
    } else if (key === "items") out[key] = rewrite(value);
    else out[key] = value;
  }
  if (notes.length > 0) {
    const before = typeof out["description"] === "string" ? `${out["description"]} ` : "";
    out["description"] = `${before}${notes.join(" ")}`;
  }
  return out;
}

/** `const: v` as `{type, enum: [v]}`, the type read from the value when the schema has none. */
function typedEnum(value: JsonValue, schema: JsonObject): JsonObject {
  const type = schema["type"] ?? jsonType(value);
  return type === undefined ? { enum: [value] } : { type, enum: [value] };
}

function jsonType(value: JsonValue): string | undefined {
  if (typeof value === "string") return "string";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : "object";
}

/** A constraint keyword in words a model can follow. */
function sayConstraint(key: string, value: JsonValue): string {
  if (key === "allOf" && Array.isArray(value))
    return value.map((v) => sayConstraint("schema", v)).join(" ");
  if (key === "not") return `It must not satisfy: ${plain(value)}.`;
  return `It must also satisfy: ${plain(value)}.`;
}

function plain(value: JsonValue): string {
  if (
    isJsonObject(value) &&
    Object.keys(value).length === 1 &&
    typeof value["pattern"] === "string"
  )
    return `the pattern ${value["pattern"]}`;
  return JSON.stringify(value);
}

// OpenAI's strict mode takes a subset of JSON Schema, and every object must list all of its
// properties as required and forbid others. Charter asks for strict only when the (expressible)
// schema is already in that form, so strict never changes which calls are valid: an optional
// argument is never turned into a required nullable one.

const STRICT_KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "enum",
  "description",
  "items",
  "anyOf",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "title",
]);
const STRICT_FORMATS = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
]);

/** Whether OpenAI's strict mode accepts this schema as it is, with the same meaning. */
export function strictCompatible(schema: JsonValue): boolean {
  if (!isJsonObject(schema)) return false;
  for (const [key, value] of Object.entries(schema)) {
    if (!STRICT_KEYWORDS.has(key)) return false;
    if (key === "format" && (typeof value !== "string" || !STRICT_FORMATS.has(value))) return false;
    if (key === "items" && !strictCompatible(value)) return false;
    if (key === "anyOf" && !(Array.isArray(value) && value.every(strictCompatible))) return false;
  }
  const properties = schema["properties"];
  if (schema["type"] === "object" || properties !== undefined) {
    if (!isJsonObject(properties) || schema["additionalProperties"] !== false) return false;
    const required = new Set(Array.isArray(schema["required"]) ? schema["required"] : []);
    for (const [name, sub] of Object.entries(properties))
      if (!required.has(name) || !strictCompatible(sub)) return false;
  }
  return true;
}
