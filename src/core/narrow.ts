import {
  cloneJson,
  isJsonObject,
  jsonEqual,
  setOwn,
  type JsonObject,
  type JsonSchema,
  type JsonValue,
} from "./json.js";
import { PATH_WITHIN, rootPattern } from "./path-within.js";
import type { ActionCaveats } from "./policy.js";

const LOWER_BOUNDS = new Set([
  "minimum",
  "exclusiveMinimum",
  "minLength",
  "minItems",
  "minProperties",
]);
const UPPER_BOUNDS = new Set([
  "maximum",
  "exclusiveMaximum",
  "maxLength",
  "maxItems",
  "maxProperties",
]);

/** Whether a value satisfies a schema; lets narrowing check a bound value against the merged property. */
export type ValueCheck = (schema: JsonSchema, value: JsonValue) => boolean;

/**
 * A tool's input schema narrowed by a grant's caveats, for showing to a model: a bound argument
 * becomes `const`, enums are intersected, bounds tightened, and whatever cannot be merged keyword
 * by keyword is added under `allOf`. A value the grant forbids is never offered as a choice: a
 * property no value can satisfy (conflicting consts, disjoint enums, a bound value the
 * constraints reject) is shown as `false`. The result shares no objects with the grant.
 */
export function narrowSchema(
  base: JsonObject,
  caveats: ActionCaveats,
  check?: ValueCheck,
): JsonObject {
  let out = cloneJson(base);
  for (const constraint of caveats.constraints) {
    if (isJsonObject(constraint)) {
      const merged = mergeSchema(out, cloneJson(constraint));
      if (isJsonObject(merged)) out = merged;
    }
  }
  const bindNames = Object.keys(caveats.binds);
  if (bindNames.length > 0) {
    const properties = isJsonObject(out["properties"]) ? { ...out["properties"] } : {};
    for (const name of bindNames) {
      const was = properties[name];
      const value = cloneJson(caveats.binds[name] as JsonValue);
      const allowed =
        was === undefined ||
        (admitsFixed(was, value) && (!check || check(was as JsonSchema, value)));
      const description =
        isJsonObject(was) && typeof was["description"] === "string"
          ? { description: was["description"] }
          : {};
      setOwn(properties, name, allowed ? { ...description, const: value } : false);
    }
    out = { ...out, properties, required: union(out["required"], bindNames) };
  }
  return out;
}

/** False when a property schema pins values (`false`, `const`, `enum`) and the value is not one of them. */
function admitsFixed(schema: JsonValue, value: JsonValue): boolean {
  if (schema === false) return false;
  if (!isJsonObject(schema)) return true;
  if (Object.hasOwn(schema, "const") && !jsonEqual(schema["const"], value)) return false;
  return !Array.isArray(schema["enum"]) || schema["enum"].some((x) => jsonEqual(x, value));
}

/**
 * Merges constraint `b` into schema `a`, keyword by keyword and recursively through `properties`
 * and `items`, so a nested enum is intersected too; what cannot be merged goes under `allOf`.
 */
function mergeSchema(a: JsonSchema, b: JsonSchema): JsonSchema {
  if (a === false || b === false) return false;
  if (a === true) return b;
  if (b === true) return a;
  const out: JsonObject = { ...a };
  const extra: JsonObject[] = [];
  for (const [key, value] of Object.entries(b)) {
    const mine = out[key];
    if (key === "const") {
      // Two different consts, or a const outside the enum: no value is left.
      if (Object.hasOwn(out, "const") && !jsonEqual(out["const"], value)) return false;
      if (Array.isArray(out["enum"]) && !out["enum"].some((x) => jsonEqual(x, value))) return false;
      out["const"] = value;
      delete out["enum"];
    } else if (key === "enum" && Array.isArray(value)) {
      if (Object.hasOwn(out, "const")) {
        if (!value.some((y) => jsonEqual(out["const"], y))) return false;
        continue;
      }
      const kept = Array.isArray(mine)
        ? mine.filter((x) => value.some((y) => jsonEqual(x, y)))
        : value;
      if (kept.length === 0) return false;
      out["enum"] = kept;
    } else if (key === PATH_WITHIN && typeof value === "string") {
      // Shown to a model as the pattern a path within the root matches (decide checks the canonical path).
      const pattern = rootPattern(value);
      if (out["pattern"] === undefined) out["pattern"] = pattern;
      else if (out["pattern"] !== pattern) extra.push({ pattern });
    } else if (key === "required") {
      out["required"] = union(mine, value);
    } else if (mine === undefined) {
      out[key] = value;
    } else if (key === "properties" && isJsonObject(mine) && isJsonObject(value)) {
      const properties: JsonObject = { ...mine };
      for (const [name, schema] of Object.entries(value)) {
        setOwn(
          properties,
          name,
          Object.hasOwn(properties, name)
            ? mergeSchema(properties[name] as JsonSchema, schema as JsonSchema)
            : schema,
        );
      }
      out["properties"] = properties;
    } else if (key === "items" && isSchema(mine) && isSchema(value)) {
      out["items"] = mergeSchema(mine, value);
    } else if (LOWER_BOUNDS.has(key) && typeof mine === "number" && typeof value === "number") {
      out[key] = Math.max(mine, value);
    } else if (UPPER_BOUNDS.has(key) && typeof mine === "number" && typeof value === "number") {
      out[key] = Math.min(mine, value);
    } else if (!jsonEqual(mine, value)) {
      extra.push({ [key]: value });
    }
  }
  return withAllOf(out, extra);
}

function isSchema(v: JsonValue | undefined): v is JsonSchema {
  return typeof v === "boolean" || isJsonObject(v);
}

function withAllOf(schema: JsonObject, extra: JsonObject[]): JsonObject {
  if (extra.length === 0) return schema;
  const existing = Array.isArray(schema["allOf"]) ? schema["allOf"] : [];
  return { ...schema, allOf: [...existing, ...extra] };
}

function union(a: JsonValue | undefined, b: JsonValue | readonly string[] | undefined): string[] {
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
  return [...new Set([...strings(a), ...strings(b)])];
}
