import type { CatalogAction } from "./catalog.js";
import { isJsonObject, type JsonSchema, type JsonValue } from "./json.js";
import { acceptsValue, type SchemaCompiler } from "./schema.js";

/**
 * Cheap checks that a constraint or rule schema can ever be met by arguments the tool accepts.
 * Answers one message per problem found; an empty list means "nothing obviously impossible".
 * It catches the common mistakes — a property the tool schema forbids, a fixed value the tool's
 * property schema rejects, a `false` schema — not every unsatisfiable combination.
 */
export function checkSatisfiable(
  schema: JsonSchema,
  action: CatalogAction,
  schemas: SchemaCompiler,
): string[] {
  if (schema === false) return ["the schema `false` can never match"];
  const tool = action.tool?.inputSchema ?? action.inputSchema;
  if (schema === true || !tool) return [];
  const declared = isJsonObject(tool["properties"]) ? tool["properties"] : {};
  const closed = tool["additionalProperties"] === false && tool["patternProperties"] === undefined;
  const problems: string[] = [];

  const required = Array.isArray(schema["required"])
    ? schema["required"].filter((x): x is string => typeof x === "string")
    : [];
  const properties = isJsonObject(schema["properties"]) ? schema["properties"] : {};
  for (const name of new Set([...required, ...Object.keys(properties)])) {
    if (closed && !Object.hasOwn(declared, name)) {
      problems.push(`names property "${name}", which the tool's input schema forbids`);
      continue;
    }
    const own = properties[name];
    const base = declared[name];
    if (!isJsonObject(own) || base === undefined) continue;
    const fixed = fixedValues(own);
    if (fixed && fixed.length > 0 && fixed.every((v) => !acceptsValue(schemas, base, v))) {
      problems.push(
        `property "${name}" is fixed to ${fixed.length === 1 ? "a value" : "values"} the tool's schema for it rejects`,
      );
    }
  }
  return problems;
}

/** The only values a property schema admits, when it pins them with `const` or `enum`. */
function fixedValues(schema: JsonValue): JsonValue[] | undefined {
  if (!isJsonObject(schema)) return undefined;
  if (Object.hasOwn(schema, "const")) return [schema["const"] as JsonValue];
  if (Array.isArray(schema["enum"])) return schema["enum"];
  return undefined;
}
