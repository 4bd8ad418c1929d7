import { ACTION_ID as NAME, compileChecked, type Catalog } from "./catalog.js";
import type { ProblemList } from "./errors.js";
import { cloneJson, isJsonObject, setOwn, type JsonObject, type JsonSchema } from "./json.js";
import type { ActionCaveats, Rule } from "./policy.js";
import { checkSatisfiable } from "./satisfiable.js";

/** Reads a source's per-action `constraints` and `rules`, checking each against the action's tool schema. */
export function readCaveats(
  constraintsRaw: unknown,
  rulesRaw: unknown,
  sourceId: string,
  catalog: Catalog,
  problems: ProblemList,
): Map<string, ActionCaveats> {
  const subject = `source ${sourceId}`;
  const out = new Map<string, { constraints: JsonSchema[]; binds: JsonObject; rules: Rule[] }>();
  const slot = (actionId: string) => {
    let c = out.get(actionId);
    if (!c) out.set(actionId, (c = { constraints: [], binds: {}, rules: [] }));
    return c;
  };
  const actionOf = (actionId: string, what: string) => {
    const action = catalog.actions.get(actionId);
    if (!action)
      problems.add(subject, `${what} name action "${actionId}", which the catalog lacks`);
    return action;
  };

  if (constraintsRaw !== undefined && !isJsonObject(constraintsRaw))
    problems.add(subject, "constraints must be a map from action id to {schema, bind}");
  for (const [actionId, raw] of Object.entries(
    isJsonObject(constraintsRaw) ? constraintsRaw : {},
  )) {
    const action = actionOf(actionId, "constraints");
    const where = `${subject} constraints ${actionId}`;
    if (!action) continue;
    if (!isJsonObject(raw) || Object.keys(raw).some((k) => k !== "schema" && k !== "bind")) {
      problems.add(where, "a constraint is an object with `schema` and/or `bind`");
      continue;
    }
    const schema = raw["schema"];
    if (schema !== undefined) {
      if (!isJsonObject(schema)) problems.add(where, "schema must be a JSON Schema object");
      else if (compileChecked(schema, where, "schema", problems, catalog.schemas)) {
        for (const m of checkSatisfiable(schema, action, catalog.schemas)) problems.add(where, m);
        slot(actionId).constraints.push(cloneJson(schema));
      }
    }
    const bind = raw["bind"];
    if (bind !== undefined) {
      if (!isJsonObject(bind))
        problems.add(where, "bind must be a map from argument name to exact value");
      else {
        for (const m of checkSatisfiable(
          { type: "object", required: Object.keys(bind), properties: constProperties(bind) },
          action,
          catalog.schemas,
        )) {
          problems.add(where, `bind: ${m}`);
        }
        const binds = slot(actionId).binds;
        for (const [name, value] of Object.entries(bind)) setOwn(binds, name, cloneJson(value));
      }
    }
  }

  if (rulesRaw !== undefined && !isJsonObject(rulesRaw))
    problems.add(subject, "rules must be a map from action id to a list of rules");
  for (const [actionId, list] of Object.entries(isJsonObject(rulesRaw) ? rulesRaw : {})) {
    const action = actionOf(actionId, "rules");
    if (!action) continue;
    if (!Array.isArray(list)) {
      problems.add(`${subject} rules ${actionId}`, "must be a list of rules");
      continue;
    }
    for (const [i, raw] of list.entries()) {
      const where = `${subject} rules ${actionId}[${i}]`;
      const rule = readRule(raw, sourceId, where, problems);
      if (!rule) continue;
      if (!compileChecked(rule.when, where, "when", problems, catalog.schemas)) continue;
      for (const m of checkSatisfiable(rule.when, action, catalog.schemas)) problems.add(where, m);
      slot(actionId).rules.push(rule);
    }
  }
  return out;
}

function readRule(
  raw: unknown,
  source: string,
  where: string,
  problems: ProblemList,
): Rule | undefined {
  if (!isJsonObject(raw)) {
    problems.add(where, "a rule is an object with `when` and `then`");
    return undefined;
  }
  const [extra] = Object.keys(raw).filter(
    (k) => !["when", "then", "requirement", "reason"].includes(k),
  );
  if (extra !== undefined) problems.add(where, `unknown key "${extra}"`);
  const { when, then, requirement, reason } = raw;
  if (!isJsonObject(when) && typeof when !== "boolean") {
    problems.add(where, "when must be a JSON Schema over the arguments");
    return undefined;
  }
  if (
    then === "require_approval" &&
    typeof requirement === "string" &&
    NAME.test(requirement) &&
    reason === undefined
  ) {
    return { when: cloneJson(when), then, requirement, source };
  }
  if (
    then === "deny" &&
    typeof reason === "string" &&
    reason.trim() !== "" &&
    requirement === undefined
  ) {
    return { when: cloneJson(when), then, reason, source };
  }
  problems.add(
    where,
    "then must be require_approval (with a requirement name) or deny (with a reason)",
  );
  return undefined;
}

function constProperties(bind: JsonObject): JsonObject {
  const props: JsonObject = {};
  for (const [k, v] of Object.entries(bind)) setOwn(props, k, { const: v });
  return props;
}
