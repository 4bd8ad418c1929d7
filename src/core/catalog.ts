import { readActionKind, type ActionKindDeclaration } from "./action-kind.js";
import { ProblemList } from "./errors.js";
import { cloneJson, isJsonObject, type JsonObject, type JsonSchema } from "./json.js";
import { parseResourceTemplate, type ResourceTemplate } from "./resource.js";
import type { ResultLabels } from "./run.js";
import {
  createSchemaCompiler,
  type CompiledSchema,
  type SchemaCompiler,
  type SchemaCompilerOptions,
} from "./schema.js";
import { readSummaryPaths, type SummaryPaths } from "./summary-paths.js";

/** What an action does to the world; informational, shown to models and operators. */
export type Effect = "read" | "write" | "external" | "destructive";
export const EFFECTS: readonly Effect[] = ["read", "write", "external", "destructive"];

/** What a model sees of an action: its tool. */
export interface ToolDescriptor {
  /** Unique in the catalog, `^[a-zA-Z0-9_-]{1,64}$`. */
  readonly name: string;
  readonly description: string;
  /** An object schema for the call's arguments. */
  readonly inputSchema: JsonObject;
  readonly outputSchema?: JsonObject;
  /** Hints for clients, as MCP defines them; a hint not set here is derived from the action's effect. */
  readonly annotations?: ToolAnnotations;
}

/**
 * MCP's tool annotations (hints, never guarantees): `readOnlyHint` (changes nothing),
 * `destructiveHint` (may destroy or overwrite; meaningful only when not read-only),
 * `idempotentHint` (repeating it with the same arguments changes nothing more), `openWorldHint`
 * (reaches entities outside the deployment, such as the web), and a human `title`.
 */
export interface ToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;

/**
 * A capability the deployment knows, with its tool (if models may call it) and authority
 * metadata. Its kind (ActionKindDeclaration): a tool action declares neither `agent` nor
 * `operation`; a start-agent action its agent definition; a graph operation its definition and kind.
 */
export interface CatalogAction extends ActionKindDeclaration {
  readonly id: string;
  readonly effect: Effect;
  /** Whether a grant holding this action may hand it on to a sub-agent. */
  readonly delegable: boolean;
  /** A template such as `mailbox/{to}`, resolved from the call's arguments. */
  readonly resource?: ResourceTemplate;
  readonly tool?: ToolDescriptor;
  /** The input schema an agent or operation action without a tool declares (a tool's is in `tool`). */
  readonly inputSchema?: JsonObject;
  /** The input schema (the tool's, or the action's own `inputSchema`), compiled once at load time. */
  readonly input?: CompiledSchema;
  /** Argument paths (JSON Pointers) an owner is shown in an approval request; other arguments appear as digests. */
  readonly summary?: SummaryPaths;
  /** What the action's result brings into its run (DESIGN §7): labels, each entry when its `when` over the arguments holds. */
  readonly results?: readonly ResultLabels[];
}

/** The versioned universe of actions, indexed by id and by tool name. */
export interface Catalog {
  readonly version: string;
  /** Every action, in document order. */
  readonly actions: ReadonlyMap<string, CatalogAction>;
  /** Actions that have a tool, by tool name. */
  readonly tools: ReadonlyMap<string, CatalogAction>;
  /** The compiler every schema of this catalog (and of policies loaded against it) goes through. */
  readonly schemas: SchemaCompiler;
  /** Every label some action's result brings into a run, sorted: the labels a policy may name. */
  readonly labels: readonly string[];
}

/** Action ids, and the names of sources, profiles and requirements: letters, digits and _ . : -. */
export const ACTION_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const ACTION_KEYS = new Set([
  "id",
  "kind",
  "agent",
  "operation",
  "inputSchema",
  "effect",
  "delegable",
  "resource",
  "tool",
  "summary",
  "results",
]);
const TOOL_KEYS = new Set(["name", "description", "inputSchema", "outputSchema", "annotations"]);

/**
 * Builds a catalog from a parsed document `{version, actions: [...]}`. Every problem is collected
 * and thrown together as one LoadError naming `file`, the action and the problem.
 */
export function buildCatalog(
  document: unknown,
  file: string,
  schemaOptions: SchemaCompilerOptions = {},
): Catalog {
  const problems = new ProblemList(file);
  const schemas = createSchemaCompiler(schemaOptions);
  const actions = new Map<string, CatalogAction>();
  const tools = new Map<string, CatalogAction>();

  if (!isJsonObject(document)) {
    problems.add(undefined, "a catalog must be an object with `version` and `actions`");
    problems.throwIfAny();
    throw new Error("unreachable");
  }
  for (const key of Object.keys(document)) {
    if (key !== "version" && key !== "actions")
      problems.add(undefined, `unknown top-level key "${key}"`);
  }
  const version = document["version"];
  if (typeof version !== "string" || version.trim() === "")
    problems.add(undefined, "`version` must be a non-empty string");
  const list = document["actions"];
  if (!Array.isArray(list)) problems.add(undefined, "`actions` must be a list");

  for (const [index, raw] of (Array.isArray(list) ? list : []).entries()) {
    const action = readAction(raw, index, problems, schemas);
    if (!action) continue;
    if (actions.has(action.id)) {
      problems.add(action.id, "duplicate action id");
      continue;
    }
    actions.set(action.id, action);
    if (action.tool) {
      const other = tools.get(action.tool.name);
      if (other)
        problems.add(
          action.id,
          `duplicate tool name "${action.tool.name}" (also used by ${other.id})`,
        );
      else tools.set(action.tool.name, action);
    }
  }
  problems.throwIfAny();
  const labels = new Set<string>();
  for (const a of actions.values())
    for (const r of a.results ?? []) r.labels.forEach((l) => labels.add(l));
  return { version: version as string, actions, tools, schemas, labels: [...labels].sort() };
}

function readAction(
  raw: unknown,
  index: number,
  problems: ProblemList,
  schemas: SchemaCompiler,
): CatalogAction | undefined {
  if (!isJsonObject(raw)) {
    problems.add(`actions[${index}]`, "an action must be an object");
    return undefined;
  }
  const id = raw["id"];
  if (typeof id !== "string" || !ACTION_ID.test(id)) {
    problems.add(
      `actions[${index}]`,
      `invalid action id ${JSON.stringify(id)} (letters, digits and _ . : -, at most 128)`,
    );
    return undefined;
  }
  const before = problems.size;
  for (const key of Object.keys(raw))
    if (!ACTION_KEYS.has(key)) problems.add(id, `unknown key "${key}"`);

  const effect = raw["effect"] ?? "read";
  if (typeof effect !== "string" || !(EFFECTS as readonly string[]).includes(effect)) {
    problems.add(id, `effect must be one of ${EFFECTS.join(", ")}`);
  }
  const delegable = raw["delegable"] ?? false;
  if (typeof delegable !== "boolean") problems.add(id, "delegable must be true or false");

  const kind = readActionKind(raw, id, problems);
  const tool = raw["tool"] === undefined ? undefined : readTool(raw["tool"], id, problems);
  const inputSchema = tool?.inputSchema ?? readOwnInput(raw, id, kind, problems);
  const input = inputSchema
    ? compileChecked(inputSchema, id, "inputSchema", problems, schemas)
    : undefined;
  if (tool?.outputSchema) compileChecked(tool.outputSchema, id, "outputSchema", problems, schemas);

  let resource: ResourceTemplate | undefined;
  const template = raw["resource"];
  if (template !== undefined) {
    resource = readResource(template, id, inputSchema, problems);
  }
  const summary =
    raw["summary"] === undefined
      ? undefined
      : readSummaryPaths(raw["summary"], id, inputSchema, problems);
  const results =
    raw["results"] === undefined ? undefined : readResults(raw["results"], id, problems, schemas);
  if (problems.size > before || !kind) return undefined;
  return {
    id,
    ...kind,
    effect: effect as Effect,
    delegable: delegable as boolean,
    ...(resource ? { resource } : {}),
    ...(tool ? { tool } : {}),
    ...(!tool && inputSchema ? { inputSchema } : {}),
    ...(input ? { input } : {}),
    ...(summary ? { summary } : {}),
    ...(results ? { results } : {}),
  };
}

/**
 * `results: {labels: [untrusted], when?: schema}`, or a list of them: the labels an allowed
 * call's result brings into its run, each entry only when its `when` over the arguments holds
 * (a fetch of the intranet is not untrusted). Labels come from here only, never from the model
 * or from an upstream tool's own annotations.
 */
function readResults(
  raw: unknown,
  id: string,
  problems: ProblemList,
  schemas: SchemaCompiler,
): ResultLabels[] | undefined {
  const list = Array.isArray(raw) ? raw : [raw];
  const out: ResultLabels[] = [];
  for (const [i, entry] of list.entries()) {
    const where = Array.isArray(raw) ? `results[${i}]` : "results";
    if (!isJsonObject(entry) || Object.keys(entry).some((k) => !RESULT_KEYS.has(k))) {
      problems.add(
        id,
        `${where} must be {labels: [names], when?, ifResult? or unlessResult?: JSON Schemas}`,
      );
      continue;
    }
    const labels = entry["labels"];
    if (
      !Array.isArray(labels) ||
      labels.length === 0 ||
      !labels.every((l): l is string => typeof l === "string" && ACTION_ID.test(l))
    ) {
      problems.add(
        id,
        `${where}.labels must be a non-empty list of label names (letters, digits and _ . : -)`,
      );
      continue;
    }
    if (entry["ifResult"] !== undefined && entry["unlessResult"] !== undefined) {
      problems.add(id, `${where} sets ifResult or unlessResult, not both`);
      continue;
    }
    const schemasOf: Record<string, JsonSchema> = {};
    let ok = true;
    for (const key of ["when", "ifResult", "unlessResult"] as const) {
      const schema = entry[key];
      if (schema === undefined) continue;
      if (!isJsonObject(schema) && typeof schema !== "boolean") {
        problems.add(id, `${where}.${key} must be a JSON Schema`);
        ok = false;
      } else if (!compileChecked(schema, id, `${where}.${key}`, problems, schemas)) ok = false;
      else schemasOf[key] = cloneJson(schema);
    }
    if (ok) out.push({ labels: [...new Set(labels)].sort(), ...schemasOf });
  }
  return out;
}

const RESULT_KEYS = new Set(["labels", "when", "ifResult", "unlessResult"]);

function readTool(raw: unknown, id: string, problems: ProblemList): ToolDescriptor | undefined {
  if (!isJsonObject(raw)) {
    problems.add(id, "tool must be an object with name, description and inputSchema");
    return undefined;
  }
  for (const key of Object.keys(raw))
    if (!TOOL_KEYS.has(key)) problems.add(id, `unknown tool key "${key}"`);
  const { name, description, inputSchema, outputSchema } = raw;
  let ok = true;
  const annotations =
    raw["annotations"] === undefined
      ? undefined
      : readAnnotations(raw["annotations"], id, problems);
  if (raw["annotations"] !== undefined && !annotations) ok = false;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    problems.add(
      id,
      `invalid tool name ${JSON.stringify(name)} (must match ^[a-zA-Z0-9_-]{1,64}$)`,
    );
    ok = false;
  }
  if (typeof description !== "string" || description.trim() === "") {
    problems.add(id, "tool description must be a non-empty string");
    ok = false;
  }
  if (!isJsonObject(inputSchema) || inputSchema["type"] !== "object") {
    problems.add(id, 'inputSchema must be an object schema (with type: "object")');
    ok = false;
  }
  if (outputSchema !== undefined && !isJsonObject(outputSchema)) {
    problems.add(id, "outputSchema must be a JSON Schema object");
    ok = false;
  }
  if (!ok) return undefined;
  return {
    name: name as string,
    description: description as string,
    inputSchema: cloneJson(inputSchema as JsonObject),
    ...(isJsonObject(outputSchema) ? { outputSchema: cloneJson(outputSchema) } : {}),
    ...(annotations ? { annotations } : {}),
  };
}

function readAnnotations(
  raw: unknown,
  id: string,
  problems: ProblemList,
): ToolAnnotations | undefined {
  if (!isJsonObject(raw)) {
    problems.add(id, "tool annotations must be an object");
    return undefined;
  }
  const before = problems.size;
  const out: { -readonly [K in keyof ToolAnnotations]: ToolAnnotations[K] } = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key === "title") {
      if (typeof value === "string" && value.trim() !== "") out.title = value;
      else problems.add(id, "tool annotation title must be a non-empty string");
    } else if ((HINTS as readonly string[]).includes(key)) {
      if (typeof value === "boolean") out[key as (typeof HINTS)[number]] = value;
      else problems.add(id, `tool annotation ${key} must be true or false`);
    } else {
      problems.add(id, `unknown tool annotation "${key}" (title, ${HINTS.join(", ")})`);
    }
  }
  return problems.size > before ? undefined : out;
}

/** Compiles a schema, turning a compile failure into a load problem. */
export function compileChecked(
  schema: JsonSchema,
  subject: string,
  what: string,
  problems: ProblemList,
  schemas: SchemaCompiler,
): CompiledSchema | undefined {
  try {
    return schemas.compile(schema);
  } catch (err) {
    problems.add(subject, `invalid ${what}: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

/**
 * The `inputSchema` an agent or operation action declares beside (not in) a tool: graph runtimes
 * call operations without a model, so such an action needs no tool. A tool action keeps its
 * schema in its tool; an action with a tool declares it there only.
 */
function readOwnInput(
  raw: JsonObject,
  id: string,
  kind: ActionKindDeclaration | undefined,
  problems: ProblemList,
): JsonObject | undefined {
  const schema = raw["inputSchema"];
  if (schema === undefined) return undefined;
  if (!kind || (kind.agent === undefined && kind.operation === undefined)) {
    problems.add(
      id,
      "only agent and operation actions declare inputSchema beside a tool; a tool action declares it in its tool",
    );
    return undefined;
  }
  if (raw["tool"] !== undefined) {
    problems.add(id, "an action with a tool declares its inputSchema in the tool");
    return undefined;
  }
  if (!isJsonObject(schema) || schema["type"] !== "object") {
    problems.add(id, 'inputSchema must be an object schema (with type: "object")');
    return undefined;
  }
  return cloneJson(schema);
}

function readResource(
  raw: unknown,
  id: string,
  inputSchema: JsonObject | undefined,
  problems: ProblemList,
): ResourceTemplate | undefined {
  if (typeof raw !== "string") {
    problems.add(id, "resource must be a template string such as mailbox/{to}");
    return undefined;
  }
  const parsed = parseResourceTemplate(raw);
  if (typeof parsed === "string") {
    problems.add(id, `invalid resource template "${raw}": ${parsed}`);
    return undefined;
  }
  if (!inputSchema) {
    if (parsed.arguments.length > 0)
      problems.add(
        id,
        `resource template "${raw}" names arguments but the action has no tool schema`,
      );
    return parsed;
  }
  const declared = inputSchema["properties"];
  for (const arg of parsed.arguments) {
    if (!isJsonObject(declared) || !Object.hasOwn(declared, arg)) {
      problems.add(
        id,
        `resource template "${raw}" names argument "${arg}", which the input schema does not declare`,
      );
    }
  }
  return parsed;
}
