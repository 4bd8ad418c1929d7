import type { Catalog } from "./catalog.js";
import { canonicalJson } from "./digest.js";
import { isJsonObject, setOwn, type JsonObject, type JsonSchema, type JsonValue } from "./json.js";
import type { ActionCaveats } from "./policy.js";
import { candidateValues } from "./sample-values.js";
import { acceptsValue } from "./schema.js";

// Sample calls for an action (DESIGN §8: what `charter analyze` and `charter diff` decide): a
// base call valid against the tool's input schema and the policy's binds and constraints, a call
// made to satisfy each rule condition and constraint, and the base with one argument moved to
// each candidate value (the boundaries of the bounds, each enum member, a matching and a
// non-matching string). Every sample validates against the tool's input schema (the check decide
// makes); the count is capped. Pure and deterministic: the same inputs give the same samples.

/** A call `charter analyze` or `charter diff` decides. */
export interface SampleCall {
  readonly actionId: string;
  /** The tool's name; "" for an action without a tool (called by its id). */
  readonly toolName: string;
  readonly arguments: JsonObject;
}

/** Most samples made for one action. */
export const MAX_SAMPLES_PER_ACTION = 64;

/**
 * Samples for `actionId` from the tool's schema and the caveats of every grant or source that
 * speaks about the action (`caveats`: constraints, binds and rule conditions).
 */
export function sampleCalls(
  catalog: Catalog,
  actionId: string,
  caveats: readonly ActionCaveats[],
  max = MAX_SAMPLES_PER_ACTION,
): SampleCall[] {
  const action = catalog.actions.get(actionId);
  if (action === undefined) return [];
  const toolName = action.tool?.name ?? "";
  const make = (args: JsonObject): SampleCall => ({ actionId, toolName, arguments: args });
  const schema = action.tool?.inputSchema ?? action.inputSchema;
  if (schema === undefined) return [make({})];

  const constraints: JsonSchema[] = caveats.flatMap((c) => c.constraints);
  const binds: JsonObject = {};
  for (const c of caveats) for (const [k, v] of Object.entries(c.binds)) setOwn(binds, k, v);
  const conditions: JsonSchema[] = [
    ...constraints,
    ...caveats.flatMap((c) => c.rules.map((r) => r.when)),
  ];
  const toolProps = propertiesOf(schema);
  const required = requiredOf(schema);
  const names = [
    ...new Set([
      ...required,
      ...Object.keys(toolProps),
      ...conditions.flatMap((s) => Object.keys(propertiesOf(s))),
    ]),
  ];
  const schemas = catalog.schemas;
  const toolProp = (name: string): JsonSchema =>
    Object.hasOwn(toolProps, name) ? (toolProps[name] as JsonSchema) : true;
  const candidates = new Map<string, JsonValue[]>();
  for (const name of names) {
    const said = conditions.flatMap((s) => {
      const p = propertiesOf(s);
      return Object.hasOwn(p, name) ? [p[name] as JsonSchema] : [];
    });
    const values = candidateValues([toolProp(name), ...said]);
    if (Object.hasOwn(binds, name)) values.unshift(binds[name] as JsonValue);
    candidates.set(name, values);
  }
  const fits = (name: string, value: JsonValue, also: readonly JsonSchema[]): boolean =>
    acceptsValue(schemas, toolProp(name), value) &&
    also.every((s) => {
      const p = propertiesOf(s);
      return !Object.hasOwn(p, name) || acceptsValue(schemas, p[name] as JsonValue, value);
    });

  // The base: every required argument at its first value the tool, the binds and the constraints accept.
  const base: JsonObject = {};
  for (const name of required) {
    const values = candidates.get(name) ?? [];
    const value = values.find((v) => fits(name, v, constraints)) ?? values[0];
    if (value !== undefined) setOwn(base, name, value);
  }
  for (const [k, v] of Object.entries(binds)) setOwn(base, k, v);

  const out: JsonObject[] = [base];
  // A call made to meet each condition (a rule's `when`, a constraint): its arguments set to values it accepts.
  for (const condition of conditions) {
    const args = { ...base };
    for (const name of new Set([
      ...Object.keys(propertiesOf(condition)),
      ...requiredOf(condition),
    ])) {
      // The condition's own values first (its boundary, not the tool's), then every candidate.
      const own = propertiesOf(condition);
      const mine = Object.hasOwn(own, name) ? candidateValues([own[name] as JsonSchema]) : [];
      const value = [...mine, ...(candidates.get(name) ?? [])].find((v) =>
        fits(name, v, [...constraints, condition]),
      );
      if (value !== undefined) setOwn(args, name, value);
    }
    out.push(args);
  }
  // The base with one argument moved to each of its other candidates.
  for (const name of names)
    for (const value of candidates.get(name) ?? []) {
      const args = { ...base };
      setOwn(args, name, value);
      out.push(args);
    }

  const seen = new Set<string>();
  const samples: SampleCall[] = [];
  for (const args of out) {
    if (samples.length >= max) break;
    const key = canonicalJson(args);
    if (seen.has(key)) continue;
    seen.add(key);
    if ((action.input?.check(args) ?? []).length === 0) samples.push(make(args));
  }
  return samples;
}

function propertiesOf(schema: JsonSchema): Readonly<Record<string, JsonValue>> {
  if (!isJsonObject(schema)) return {};
  const p = schema["properties"];
  return isJsonObject(p) ? p : {};
}

function requiredOf(schema: JsonSchema): string[] {
  if (!isJsonObject(schema)) return [];
  const r = schema["required"];
  return Array.isArray(r) ? r.filter((x): x is string => typeof x === "string") : [];
}
