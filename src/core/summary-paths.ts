import type { ProblemList } from "./errors.js";
import { isJsonObject, type JsonObject, type JsonSchema } from "./json.js";

/**
 * The argument paths an action's catalog entry says an owner may see in an approval request:
 * JSON Pointers (RFC 6901) into the call's arguments, such as `/to` or `/customer/name`.
 */
export type SummaryPaths = readonly string[];

/** The segments of a JSON Pointer ("/a~1b/c" -> ["a/b", "c"]), or undefined when it is not one. */
export function pointerSegments(pointer: string): string[] | undefined {
  if (!pointer.startsWith("/") || /~(?![01])/.test(pointer)) return undefined;
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** A JSON Pointer segment, escaped. */
export function escapeSegment(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** The schema of one member of an object schema: its `properties` entry, else `additionalProperties`. */
export function memberSchema(schema: JsonSchema | undefined, key: string): JsonSchema | undefined {
  if (!isJsonObject(schema)) return undefined;
  const props = schema["properties"];
  if (isJsonObject(props) && Object.hasOwn(props, key)) return props[key] as JsonSchema;
  const extra = schema["additionalProperties"];
  return isJsonObject(extra) ? extra : undefined;
}

/** True when `writeOnly: true` appears anywhere in the schema: nothing under it is ever shown, not even as a digest. */
export function holdsWriteOnly(schema: JsonSchema | undefined): boolean {
  if (!isJsonObject(schema) && !Array.isArray(schema)) return false;
  if (isJsonObject(schema) && schema["writeOnly"] === true) return true;
  const children: unknown[] = Array.isArray(schema) ? schema : Object.values(schema);
  return children.some(
    (c) => (isJsonObject(c) || Array.isArray(c)) && holdsWriteOnly(c as JsonSchema),
  );
}

/**
 * Reads an action's `summary` (a list of JSON Pointers) at load time. Every path must be declared
 * through the input schema's `properties`, and neither it nor anything under it may be
 * `writeOnly`: a summary that would show a secret is a load error, not a silent omission.
 */
export function readSummaryPaths(
  raw: unknown,
  id: string,
  inputSchema: JsonObject | undefined,
  problems: ProblemList,
): SummaryPaths | undefined {
  if (!Array.isArray(raw) || !raw.every((p): p is string => typeof p === "string")) {
    problems.add(id, "summary must be a list of JSON Pointers into the arguments, such as /to");
    return undefined;
  }
  if (!inputSchema) {
    problems.add(id, "summary needs a tool with an input schema");
    return undefined;
  }
  const before = problems.size;
  for (const pointer of raw) {
    const segments = pointerSegments(pointer);
    if (segments === undefined || pointer === "/") {
      problems.add(id, `summary path ${JSON.stringify(pointer)} is not a JSON Pointer such as /to`);
      continue;
    }
    let schema: JsonSchema = inputSchema;
    let declared = true;
    let secret = false;
    for (const segment of segments) {
      const props: unknown = isJsonObject(schema) ? schema["properties"] : undefined;
      if (!isJsonObject(props) || !Object.hasOwn(props, segment)) {
        declared = false;
        break;
      }
      schema = props[segment] as JsonSchema;
      if (isJsonObject(schema) && schema["writeOnly"] === true) secret = true;
    }
    if (!declared)
      problems.add(
        id,
        `summary path ${pointer} names an argument the input schema does not declare under properties`,
      );
    else if (secret || holdsWriteOnly(schema))
      problems.add(
        id,
        `summary path ${pointer} is writeOnly (or holds a writeOnly value) and is never shown`,
      );
  }
  return problems.size > before ? undefined : [...new Set(raw)];
}
