import type { TaskGrant } from "./grant.js";
import { compareCodeUnits, isJsonObject } from "./json.js";

/** What is wrong with a value that should be a TaskGrant, or undefined when it is one. */
type Problem = string | undefined;

const GRANT_KEYS = [
  "id",
  "rootId",
  "parentId",
  "chain",
  "subject",
  "owner",
  "purpose",
  "profile",
  "issuedAt",
  "expiresAt",
  "catalogVersion",
  "allowed",
  "approvalRequired",
  "denied",
  "caveats",
  "limits",
  "mode",
  "sources",
  "chainRuns",
] as const;
const LIMIT_KEYS = new Set(["maxCalls", "maxCallsPerAction", "maxDelegationDepth"]);
const CAVEAT_KEYS = new Set(["constraints", "binds", "rules"]);
const RULE_KEYS = {
  require_approval: new Set(["when", "then", "requirement", "source", "id", "run"]),
  deny: new Set(["when", "then", "reason", "source", "id", "run"]),
};
const RUN_KEYS = new Set(["seen", "after", "within", "window"]);
const WINDOW_KEYS = new Set(["seconds", "per", "maxCalls", "sum"]);

/**
 * Checks that a value (a token's `grant` claim, a stored grant) has the shape of a TaskGrant:
 * every field of the right type, lists of strings, non-negative integer times and limits, a
 * consistent delegation chain, and `allowed`, `approvalRequired` and `denied` disjoint, sorted
 * and duplicate-free, as compose and delegate make them. Members it does not know are refused
 * rather than ignored: a grant is an authority document, and a restriction this version cannot
 * read must not be silently dropped. Problems name fields, never values.
 */
export function grantShapeProblem(value: unknown): string | undefined {
  if (!isJsonObject(value)) return "the grant is not an object";
  const g = value as Record<string, unknown>;
  if (!onlyKeys(g, new Set(GRANT_KEYS))) return "the grant has a member this version does not know";
  for (const key of ["id", "rootId", "subject"] as const)
    if (!isNonEmptyString(g[key])) return `grant.${key} must be a non-empty string`;
  for (const key of ["owner", "purpose", "profile", "catalogVersion"] as const)
    if (typeof g[key] !== "string") return `grant.${key} must be a string`;
  if (g["parentId"] !== null && !isNonEmptyString(g["parentId"]))
    return "grant.parentId must be a non-empty string or null";
  for (const key of ["chain", "allowed", "approvalRequired", "denied", "sources"] as const) {
    if (!isStringList(g[key])) return `grant.${key} must be a list of strings`;
  }
  for (const key of ["issuedAt", "expiresAt"] as const)
    if (!isCount(g[key])) return `grant.${key} must be a non-negative integer`;
  if (g["mode"] !== "live" && g["mode"] !== "shadow")
    return 'grant.mode must be "live" or "shadow"';
  const grant = g as unknown as TaskGrant;
  return (
    actionListsProblem(grant) ??
    limitsProblem(g["limits"]) ??
    caveatsProblem(g["caveats"]) ??
    chainProblem(grant)
  );
}

/** True when `value` has the shape of a TaskGrant (see grantShapeProblem). */
export function isTaskGrant(value: unknown): value is TaskGrant {
  return grantShapeProblem(value) === undefined;
}

const ACTION_LISTS = ["allowed", "approvalRequired", "denied"] as const;

/** Each action list strictly ascending in code-unit order (so duplicate-free), and no id in two lists. */
function actionListsProblem(g: TaskGrant): Problem {
  for (const key of ACTION_LISTS) {
    const ids = g[key];
    if (ids.some((id, i) => i > 0 && compareCodeUnits(ids[i - 1] as string, id) >= 0))
      return `grant.${key} must be sorted and free of duplicates`;
  }
  for (const [i, a] of ACTION_LISTS.entries()) {
    for (const b of ACTION_LISTS.slice(i + 1)) {
      const inA = new Set(g[a]);
      if (g[b].some((id) => inA.has(id)))
        return `grant.${a} and grant.${b} must not share an action`;
    }
  }
  return undefined;
}

function limitsProblem(value: unknown): Problem {
  if (!isJsonObject(value) || !onlyKeys(value, LIMIT_KEYS))
    return "grant.limits must be an object of known limits";
  for (const key of ["maxCalls", "maxCallsPerAction"]) {
    if (value[key] !== undefined && !isCount(value[key]))
      return `grant.limits.${key} must be a non-negative integer`;
  }
  if (!isCount(value["maxDelegationDepth"]))
    return "grant.limits.maxDelegationDepth must be a non-negative integer";
  return undefined;
}

function caveatsProblem(value: unknown): Problem {
  if (!isJsonObject(value)) return "grant.caveats must be an object keyed by action id";
  for (const caveats of Object.values(value)) {
    if (!isJsonObject(caveats) || !onlyKeys(caveats, CAVEAT_KEYS))
      return "grant.caveats has an entry that is not {constraints, binds, rules}";
    const { constraints, binds, rules } = caveats;
    if (!Array.isArray(constraints) || !constraints.every(isSchema))
      return "grant.caveats has constraints that are not a list of JSON Schemas";
    if (!isJsonObject(binds)) return "grant.caveats has binds that are not an object";
    if (!Array.isArray(rules) || !rules.every(isRule))
      return "grant.caveats has rules that are not a list of rules";
  }
  return undefined;
}

function chainProblem(g: TaskGrant): Problem {
  if (g.chainRuns !== undefined) {
    if (!isStringList(g.chainRuns) || g.chainRuns.length !== g.chain.length)
      return "grant.chainRuns must be a list of strings as long as grant.chain";
  }
  if (g.parentId === null) {
    if (g.chain.length > 0 || g.rootId !== g.id)
      return "a root grant must have an empty chain and be its own root";
  } else if (g.chain[0] !== g.rootId || g.chain.at(-1) !== g.parentId) {
    return "grant.chain must run from grant.rootId to grant.parentId";
  }
  return undefined;
}

function isRule(value: unknown): boolean {
  if (!isJsonObject(value) || !isSchema(value["when"]) || typeof value["source"] !== "string")
    return false;
  if (value["id"] !== undefined && !isNonEmptyString(value["id"])) return false;
  if (
    value["run"] !== undefined &&
    !(isRunCondition(value["run"]) && isNonEmptyString(value["id"]))
  )
    return false;
  if (value["then"] === "require_approval")
    return onlyKeys(value, RULE_KEYS.require_approval) && typeof value["requirement"] === "string";
  if (value["then"] === "deny")
    return onlyKeys(value, RULE_KEYS.deny) && typeof value["reason"] === "string";
  return false;
}

/** A rule's condition over the run, as `readRunRules` writes it. */
function isRunCondition(value: unknown): boolean {
  if (!isJsonObject(value) || !onlyKeys(value, RUN_KEYS)) return false;
  const { seen, after, within, window } = value;
  if (seen !== undefined && !isStringList(seen)) return false;
  if (after !== undefined && !isStringList(after)) return false;
  if (within !== undefined && !isCount(within)) return false;
  if (window === undefined) return true;
  if (!isJsonObject(window) || !onlyKeys(window, WINDOW_KEYS)) return false;
  const { seconds, per, maxCalls, sum } = window;
  if (!isCount(seconds) || !["run", "grant", "subject", "owner"].includes(per as string))
    return false;
  if (maxCalls !== undefined && !isCount(maxCalls)) return false;
  if (sum === undefined) return true;
  return (
    isJsonObject(sum) &&
    onlyKeys(sum, new Set(["path", "max"])) &&
    typeof sum["path"] === "string" &&
    typeof sum["max"] === "number"
  );
}

function isSchema(value: unknown): boolean {
  return typeof value === "boolean" || isJsonObject(value);
}

function onlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  return Object.keys(value).every((k) => allowed.has(k));
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === "string" && value !== "";
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
