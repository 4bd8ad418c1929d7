import {
  ACTION_ID as NAME,
  compileChecked,
  EFFECTS,
  type Catalog,
  type CatalogAction,
  type Effect,
} from "./catalog.js";
import type { ProblemList } from "./errors.js";
import { cloneJson, isJsonObject, type JsonSchema } from "./json.js";
import type { Rule } from "./policy.js";
import { parseDuration } from "./run-text.js";
import {
  PRIVATE,
  UNTRUSTED,
  WINDOW_SCOPES,
  type RunCondition,
  type RunWindow,
  type WindowScope,
} from "./run.js";
import { checkSatisfiable } from "./satisfiable.js";
import { memberSchema, pointerSegments } from "./summary-paths.js";

const RULE_KEYS = new Set([
  "id",
  "actions",
  "effects",
  "when",
  "seen",
  "after",
  "within",
  "window",
  "then",
  "requirement",
  "reason",
]);
const WINDOW_KEYS = new Set(["per", "duration", "maxCalls", "sum", "max"]);
const PRESET_KEYS = new Set(["preset", "requirement", "also"]);

/** The Rule of Two as a preset: once a run has seen untrusted content and private data, an outside effect needs a person. */
export const RULE_OF_TWO = "rule-of-two";

/**
 * Reads a source's `run:` list, the rules over the run (DESIGN §7), into per-action rules:
 * each entry selects actions (`actions`, and/or every catalog action of the `effects` listed),
 * may add a `when` over the arguments, and asks of the run what it has `seen` (labels, all of
 * them), what it did `after` (earlier actions, `within` a time) and a `window` (`maxCalls`, or a
 * `sum` of a numeric argument up to `max`, over `duration`, per run, grant, subject or owner).
 * `rule-of-two` (or `{preset: rule-of-two, requirement, also: [action ids]}`) is the Rule of Two:
 * every external action of a run that has seen `untrusted` and `private` needs approval. Every
 * problem is a load error: an unknown label, action or effect, a window over an argument an
 * action does not declare as a number, a rule that selects nothing or asks nothing of the run.
 */
export function readRunRules(
  raw: unknown,
  sourceId: string,
  catalog: Catalog,
  problems: ProblemList,
): Map<string, Rule[]> {
  const out = new Map<string, Rule[]>();
  if (raw === undefined) return out;
  const subject = `source ${sourceId}`;
  if (!Array.isArray(raw)) {
    problems.add(subject, "run must be a list of rules over the run (or rule-of-two)");
    return out;
  }
  const ids = new Set<string>();
  for (const [i, entry] of raw.entries()) {
    const where = `${subject} run[${i}]`;
    const read = readEntry(entry, i, sourceId, where, catalog, problems);
    if (!read) continue;
    if (ids.has(read.rule.id as string)) {
      problems.add(where, `rule id "${read.rule.id as string}" is used twice in this source`);
      continue;
    }
    ids.add(read.rule.id as string);
    for (const action of read.actions) {
      const list = out.get(action.id) ?? [];
      list.push(read.rule);
      out.set(action.id, list);
    }
  }
  return out;
}

function readEntry(
  entry: unknown,
  index: number,
  sourceId: string,
  where: string,
  catalog: Catalog,
  problems: ProblemList,
): { rule: Rule; actions: CatalogAction[] } | undefined {
  const before = problems.size;
  const spec = presetSpec(entry, where, problems);
  if (!spec) return undefined;
  for (const key of Object.keys(spec))
    if (!RULE_KEYS.has(key)) problems.add(where, `unknown key "${key}"`);

  const given = spec["id"];
  if (given !== undefined && (typeof given !== "string" || !NAME.test(given)))
    problems.add(where, "id must be a name (letters, digits and _ . : -)");
  const id = `${sourceId}.${typeof given === "string" ? given : `run.${index}`}`;

  const actions = selectActions(spec, where, catalog, problems);
  const when = spec["when"] ?? true;
  if (!isJsonObject(when) && typeof when !== "boolean")
    problems.add(where, "when must be a JSON Schema over the arguments");

  const run: { -readonly [K in keyof RunCondition]: RunCondition[K] } = {};
  const seen = spec["seen"];
  if (seen !== undefined) {
    if (!isNameList(seen) || seen.length === 0)
      problems.add(where, "seen must be a non-empty list of labels");
    else {
      for (const label of seen)
        if (!catalog.labels.includes(label))
          problems.add(
            where,
            `seen names label "${label}", which no catalog action's results bring in (${catalog.labels.join(", ") || "none do"})`,
          );
      run.seen = [...new Set(seen)].sort();
    }
  }
  const after = spec["after"];
  if (after !== undefined) {
    if (!isNameList(after) || after.length === 0)
      problems.add(where, "after must be a non-empty list of action ids");
    else {
      for (const a of after)
        if (!catalog.actions.has(a))
          problems.add(where, `after names action "${a}", which the catalog lacks`);
      run.after = [...new Set(after)].sort();
    }
  }
  if (spec["within"] !== undefined) {
    const within = parseDuration(spec["within"]);
    if (after === undefined) problems.add(where, "within needs after");
    else if (within === undefined)
      problems.add(where, "within must be a duration such as 90s, 30m, 1h or 2d");
    else run.within = within;
  }
  if (spec["window"] !== undefined) {
    const window = readWindow(spec["window"], where, actions, problems);
    if (window) run.window = window;
  }
  if (run.seen === undefined && run.after === undefined && run.window === undefined)
    problems.add(
      where,
      "a rule over the run asks for seen, after or window (use rules for the arguments alone)",
    );

  const then = spec["then"];
  const { requirement, reason } = spec;
  let rule: Rule | undefined;
  if (
    then === "require_approval" &&
    typeof requirement === "string" &&
    NAME.test(requirement) &&
    reason === undefined
  )
    rule = { when: cloneJson(when as JsonSchema), then, requirement, source: sourceId, id, run };
  else if (
    then === "deny" &&
    typeof reason === "string" &&
    reason.trim() !== "" &&
    requirement === undefined
  )
    rule = { when: cloneJson(when as JsonSchema), then, reason, source: sourceId, id, run };
  else
    problems.add(
      where,
      "then must be require_approval (with a requirement name) or deny (with a reason)",
    );

  if (rule && (isJsonObject(when) || typeof when === "boolean")) {
    if (compileChecked(when, where, "when", problems, catalog.schemas))
      for (const action of actions)
        for (const m of checkSatisfiable(when, action, catalog.schemas))
          problems.add(`${where} (${action.id})`, m);
  }
  return problems.size > before || !rule ? undefined : { rule, actions };
}

/** The entry itself, or the rule a preset stands for. */
function presetSpec(
  entry: unknown,
  where: string,
  problems: ProblemList,
): Record<string, unknown> | undefined {
  const preset = entry === RULE_OF_TWO ? { preset: RULE_OF_TWO } : entry;
  if (!isJsonObject(preset)) {
    problems.add(where, `a rule over the run is an object (or the preset ${RULE_OF_TWO})`);
    return undefined;
  }
  if (preset["preset"] === undefined) return preset;
  if (preset["preset"] !== RULE_OF_TWO) {
    problems.add(where, `unknown preset ${JSON.stringify(preset["preset"])} (${RULE_OF_TWO})`);
    return undefined;
  }
  for (const key of Object.keys(preset))
    if (!PRESET_KEYS.has(key))
      problems.add(where, `unknown key "${key}" of the ${RULE_OF_TWO} preset`);
  const also = preset["also"] ?? [];
  if (!isNameList(also)) {
    problems.add(where, "also must be a list of action ids");
    return undefined;
  }
  return {
    id: RULE_OF_TWO,
    effects: ["external"],
    ...(also.length > 0 ? { actions: also } : {}),
    seen: [UNTRUSTED, PRIVATE],
    then: "require_approval",
    requirement: preset["requirement"] ?? "owner",
  };
}

function selectActions(
  spec: Record<string, unknown>,
  where: string,
  catalog: Catalog,
  problems: ProblemList,
): CatalogAction[] {
  const selected = new Map<string, CatalogAction>();
  const ids = spec["actions"];
  if (ids !== undefined) {
    if (!isNameList(ids)) problems.add(where, "actions must be a list of action ids");
    else
      for (const id of ids) {
        const action = catalog.actions.get(id);
        if (action) selected.set(id, action);
        else problems.add(where, `actions names action "${id}", which the catalog lacks`);
      }
  }
  const effects = spec["effects"];
  if (effects !== undefined) {
    if (!isNameList(effects) || !effects.every((e) => (EFFECTS as readonly string[]).includes(e)))
      problems.add(where, `effects must be a list of effects (${EFFECTS.join(", ")})`);
    else
      for (const action of catalog.actions.values())
        if ((effects as readonly Effect[]).includes(action.effect)) selected.set(action.id, action);
  }
  if (ids === undefined && effects === undefined)
    problems.add(where, "a rule over the run selects its actions with actions and/or effects");
  else if (selected.size === 0) problems.add(where, "the rule selects no catalog action");
  return [...selected.values()];
}

function readWindow(
  raw: unknown,
  where: string,
  actions: readonly CatalogAction[],
  problems: ProblemList,
): RunWindow | undefined {
  const w = `${where} window`;
  if (!isJsonObject(raw)) {
    problems.add(w, "a window is {per, duration, maxCalls} or {per, duration, sum: /path, max}");
    return undefined;
  }
  const before = problems.size;
  for (const key of Object.keys(raw))
    if (!WINDOW_KEYS.has(key)) problems.add(w, `unknown key "${key}"`);
  const per = raw["per"] ?? "run";
  if (typeof per !== "string" || !(WINDOW_SCOPES as readonly string[]).includes(per))
    problems.add(w, `per must be one of ${WINDOW_SCOPES.join(", ")}`);
  const seconds = parseDuration(raw["duration"]);
  if (seconds === undefined)
    problems.add(w, "duration must be a duration such as 90s, 30m, 1h or 2d");
  const maxCalls = raw["maxCalls"];
  if (maxCalls !== undefined && !(Number.isSafeInteger(maxCalls) && (maxCalls as number) > 0))
    problems.add(w, "maxCalls must be a positive integer");
  const { sum, max } = raw;
  if ((sum === undefined) !== (max === undefined)) problems.add(w, "sum and max go together");
  if (sum !== undefined) {
    if (typeof sum !== "string" || pointerSegments(sum) === undefined)
      problems.add(w, "sum must be a JSON Pointer into the arguments, such as /amount");
    else
      for (const action of actions)
        if (!declaresNumber(action, sum))
          problems.add(
            w,
            `sum ${sum}: ${action.id}'s input schema does not declare it as a number`,
          );
    if (typeof max !== "number" || !Number.isFinite(max) || max < 0)
      problems.add(w, "max must be a number of zero or more");
  }
  if (maxCalls === undefined && sum === undefined)
    problems.add(w, "a window sets maxCalls or sum and max");
  if (problems.size > before) return undefined;
  return {
    seconds: seconds as number,
    per: per as WindowScope,
    ...(maxCalls === undefined ? {} : { maxCalls: maxCalls as number }),
    ...(sum === undefined ? {} : { sum: { path: sum as string, max: max as number } }),
  };
}

/** Whether the action's input schema declares the pointer's member, through `properties`, as a number or integer. */
function declaresNumber(action: CatalogAction, pointer: string): boolean {
  let schema: JsonSchema | undefined = action.tool?.inputSchema ?? action.inputSchema;
  for (const segment of pointerSegments(pointer) ?? []) schema = memberSchema(schema, segment);
  if (!isJsonObject(schema)) return false;
  const type = schema["type"];
  return type === "number" || type === "integer";
}

function isNameList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((x) => typeof x === "string");
}
