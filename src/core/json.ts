/** A JSON value as parsed from text: what tool arguments, schemas and binds are made of. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** A JSON object. */
export interface JsonObject {
  [key: string]: JsonValue;
}

/** A JSON Schema document (draft 2020-12), kept as plain JSON. */
export type JsonSchema = JsonObject | boolean;

/** True for a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Structural equality of two JSON values; object key order does not matter. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]))
    );
  }
  return false;
}

/** A deep copy of a JSON value, so that a caller's later mutation cannot reach a catalog or grant. */
export function cloneJson<T extends JsonValue | JsonSchema>(value: T): T {
  return structuredCloneJson(value) as T;
}

function structuredCloneJson(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(structuredCloneJson);
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) setOwn(out, k, structuredCloneJson(v));
    return out;
  }
  return value;
}

/**
 * Sets an own, enumerable property. A key named "__proto__" (which JSON.parse and YAML produce as
 * an ordinary key) stays a key instead of replacing the prototype: it alone is defined, since
 * `__proto__` is the only accessor a plain object inherits; every other key is assigned (several
 * times cheaper than defining it).
 */
export function setOwn(obj: JsonObject, key: string, value: JsonValue): void {
  if (key === "__proto__")
    Object.defineProperty(obj, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  else obj[key] = value;
}

/** Freezes a value all the way down (a frozen object's children are taken as frozen already), so no holder can change what is shared. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Sorted, duplicate-free copy of a list of ids (code-unit order, as canonical JSON sorts keys). */
export function sortedUnique(ids: Iterable<string>): string[] {
  return [...new Set(ids)].sort(compareCodeUnits);
}

/** Orders strings by UTF-16 code units, independent of locale. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
