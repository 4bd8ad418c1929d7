import { ACTION_ID as NAME, type Catalog } from "./catalog.js";
import { ProblemList } from "./errors.js";
import { isJsonObject, type JsonObject, type JsonSchema } from "./json.js";
import { readCaveats } from "./policy-caveats.js";
import { withOperationKinds } from "./policy-kinds.js";
import { readRunRules } from "./policy-run.js";
import type { RunCondition } from "./run.js";

/** `grant` sources contribute allows; a `narrow` source's non-empty allow list intersects them. */
export type SourceKind = "grant" | "narrow";
/** A suspended source contributes nothing; a profile that names one cannot be composed. */
export type SourceStatus = "active" | "suspended";
/** `shadow` grants are evaluated fully but their effects are suppressed. */
export type GrantMode = "live" | "shadow";

/** Numeric limits. Each is the minimum over the sources that set it. */
export interface Limits {
  readonly maxCalls?: number;
  readonly maxCallsPerAction?: number;
  readonly maxDelegationDepth?: number;
  readonly maxRuntimeSeconds?: number;
}

/**
 * A condition on a call's arguments (and, for a rule over the run, on the run: `run`) and what
 * follows when it matches. A rule over the run has an `id`: the verdict names the rule that held
 * the call, and a window is counted under it.
 */
export type Rule = (
  | {
      readonly when: JsonSchema;
      readonly then: "require_approval";
      readonly requirement: string;
      readonly source: string;
    }
  | {
      readonly when: JsonSchema;
      readonly then: "deny";
      readonly reason: string;
      readonly source: string;
    }
) & { readonly id?: string; readonly run?: RunCondition };

/** What a source (and later a grant) adds to one action: constraints, binds and rules. */
export interface ActionCaveats {
  /** JSON Schemas the arguments must all satisfy, besides the tool's input schema. */
  readonly constraints: readonly JsonSchema[];
  /** Arguments that must equal these exact values. */
  readonly binds: JsonObject;
  readonly rules: readonly Rule[];
}

/** A named authority source. */
export interface AuthoritySource {
  readonly id: string;
  readonly kind: SourceKind;
  readonly status: SourceStatus;
  /** Global sources apply to every profile. */
  readonly global: boolean;
  readonly allow: readonly string[];
  readonly approval: readonly string[];
  readonly deny: readonly string[];
  readonly limits: Limits;
  /** Per-action caveats, keyed by action id. */
  readonly caveats: ReadonlyMap<string, ActionCaveats>;
}

/** The sources a kind of task gets. */
export interface Profile {
  readonly id: string;
  readonly description: string;
  readonly sources: readonly string[];
  readonly mode: GrantMode;
}

/** A deployment's policy, checked against one catalog. */
export interface Policy {
  readonly version: string;
  readonly catalogVersion: string;
  readonly sources: ReadonlyMap<string, AuthoritySource>;
  readonly profiles: ReadonlyMap<string, Profile>;
  /** Used when no source sets maxRuntimeSeconds. */
  readonly defaultRuntimeSeconds: number;
  /** Distinct approvers each named requirement needs; a requirement not listed needs one. */
  readonly requirements: ReadonlyMap<string, number>;
  /**
   * Requirements (besides `owner`) whose approvals the grant's owner may give (`owner: true`);
   * every other approver must hold the role `approve:<requirement>` (see approvers.ts).
   */
  readonly ownerApproves?: ReadonlySet<string>;
}

/** The most distinct approvers a requirement may ask for. */
export const MAX_APPROVERS = 16;

/** How many distinct approvers `requirement` needs under `policy` (one unless the policy says more). */
export function approversFor(policy: Pick<Policy, "requirements">, requirement: string): number {
  return policy.requirements.get(requirement) ?? 1;
}

export const DEFAULT_RUNTIME_SECONDS = 3600;
const SOURCE_KEYS = new Set([
  "kind",
  "status",
  "global",
  "description",
  "allow",
  "approval",
  "deny",
  "operations",
  "limits",
  "constraints",
  "rules",
  "run",
]);
const LIMIT_KEYS = new Set([
  "maxCalls",
  "maxCallsPerAction",
  "maxDelegationDepth",
  "maxRuntimeSeconds",
]);

/**
 * Builds a policy from a parsed document `{version, defaults?, sources: {id: …}, profiles: {id: …}}`
 * and checks it against `catalog`: unknown actions, schemas that do not compile and rules that
 * could never match are load errors, all reported together.
 */
export function buildPolicy(document: unknown, catalog: Catalog, file: string): Policy {
  const problems = new ProblemList(file);
  if (!isJsonObject(document)) {
    problems.add(undefined, "a policy must be an object with `version`, `sources` and `profiles`");
    problems.throwIfAny();
  }
  const doc = document as JsonObject;
  for (const key of Object.keys(doc)) {
    if (!["version", "defaults", "requirements", "sources", "profiles"].includes(key))
      problems.add(undefined, `unknown top-level key "${key}"`);
  }
  const version = doc["version"];
  if (typeof version !== "string" || version.trim() === "")
    problems.add(undefined, "`version` must be a non-empty string");

  let defaultRuntimeSeconds = DEFAULT_RUNTIME_SECONDS;
  const defaults = doc["defaults"];
  if (defaults !== undefined) {
    const runtime = isJsonObject(defaults) ? defaults["maxRuntimeSeconds"] : undefined;
    if (
      !isJsonObject(defaults) ||
      Object.keys(defaults).some((k) => k !== "maxRuntimeSeconds") ||
      !isPositiveInt(runtime)
    ) {
      problems.add("defaults", "defaults may only set maxRuntimeSeconds, a positive integer");
    } else defaultRuntimeSeconds = runtime;
  }

  const ownerApproves = new Set<string>();
  const requirements = readRequirements(doc["requirements"], ownerApproves, problems);
  const sources = new Map<string, AuthoritySource>();
  for (const [id, raw] of entries(doc["sources"], "sources", problems)) {
    const source = readSource(id, raw, catalog, problems);
    if (source) sources.set(id, source);
  }
  const profiles = new Map<string, Profile>();
  for (const [id, raw] of entries(doc["profiles"], "profiles", problems)) {
    const profile = readProfile(id, raw, doc["sources"], problems);
    if (profile) profiles.set(id, profile);
  }
  problems.throwIfAny();
  return {
    version: version as string,
    catalogVersion: catalog.version,
    sources,
    profiles,
    defaultRuntimeSeconds,
    requirements,
    ownerApproves,
  };
}

/**
 * `requirements: {name: {approvers: n, owner?: true}}`: how many distinct approvers each named
 * requirement needs, and whether the grant's owner is one of them (`owner: true`; the
 * requirement `owner` always allows the owner). Approvers hold the role `approve:<name>`.
 */
function readRequirements(
  raw: unknown,
  ownerApproves: Set<string>,
  problems: ProblemList,
): Map<string, number> {
  const out = new Map<string, number>();
  if (raw === undefined) return out;
  for (const [name, value] of entries(raw, "requirements", problems)) {
    const approvers = isJsonObject(value) ? value["approvers"] : undefined;
    const owner = isJsonObject(value) ? value["owner"] : undefined;
    if (
      !isJsonObject(value) ||
      Object.keys(value).some((k) => k !== "approvers" && k !== "owner") ||
      !isPositiveInt(approvers) ||
      approvers > MAX_APPROVERS ||
      (owner !== undefined && typeof owner !== "boolean")
    ) {
      problems.add(
        `requirement ${name}`,
        `a requirement is {approvers: n, owner?: true|false}, n between 1 and ${MAX_APPROVERS}`,
      );
    } else {
      out.set(name, approvers);
      if (owner === true) ownerApproves.add(name);
    }
  }
  return out;
}

function entries(raw: unknown, what: string, problems: ProblemList): [string, unknown][] {
  if (!isJsonObject(raw)) {
    problems.add(undefined, `\`${what}\` must be a map from id to definition`);
    return [];
  }
  return Object.entries(raw).filter(([id]) => {
    if (NAME.test(id)) return true;
    problems.add(id, `invalid ${what} id (letters, digits and _ . : -, at most 128)`);
    return false;
  });
}

function readSource(
  id: string,
  raw: unknown,
  catalog: Catalog,
  problems: ProblemList,
): AuthoritySource | undefined {
  const subject = `source ${id}`;
  if (!isJsonObject(raw)) {
    problems.add(subject, "a source must be an object");
    return undefined;
  }
  const before = problems.size;
  for (const key of Object.keys(raw))
    if (!SOURCE_KEYS.has(key)) problems.add(subject, `unknown key "${key}"`);
  const kind = raw["kind"] ?? "grant";
  if (kind !== "grant" && kind !== "narrow") problems.add(subject, "kind must be grant or narrow");
  const status = raw["status"] ?? "active";
  if (status !== "active" && status !== "suspended")
    problems.add(subject, "status must be active or suspended");
  const global = raw["global"] ?? false;
  if (typeof global !== "boolean") problems.add(subject, "global must be true or false");

  const listed = (["allow", "approval", "deny"] as const).map((list) =>
    readIdList(raw[list], `${subject} ${list}`, catalog, problems),
  ) as [string[], string[], string[]];
  // `operations: {allow: [signal], approval: [fork]}` lists every operation action of those kinds.
  const [allow, approval, deny] = withOperationKinds(
    listed,
    raw["operations"],
    subject,
    catalog,
    problems,
  );
  if (kind === "narrow" && approval.length > 0) {
    problems.add(
      subject,
      "a narrow source only restricts: list approval-required actions in a grant source",
    );
  }
  const limits = readLimits(raw["limits"], subject, problems);
  const caveats = withRunRules(
    readCaveats(raw["constraints"], raw["rules"], id, catalog, problems),
    readRunRules(raw["run"], id, catalog, problems),
  );

  if (problems.size > before) return undefined;
  return {
    id,
    kind: kind as SourceKind,
    status: status as SourceStatus,
    global: global as boolean,
    allow,
    approval,
    deny,
    limits,
    caveats,
  };
}

/** A source's caveats with its rules over the run added after its own rules, per action. */
function withRunRules(
  caveats: Map<string, ActionCaveats>,
  run: ReadonlyMap<string, readonly Rule[]>,
): Map<string, ActionCaveats> {
  for (const [actionId, rules] of run) {
    const c = caveats.get(actionId) ?? { constraints: [], binds: {}, rules: [] };
    caveats.set(actionId, { ...c, rules: [...c.rules, ...rules] });
  }
  return caveats;
}

function readIdList(
  raw: unknown,
  subject: string,
  catalog: Catalog,
  problems: ProblemList,
): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || !raw.every((x): x is string => typeof x === "string")) {
    problems.add(subject, "must be a list of action ids");
    return [];
  }
  for (const actionId of raw)
    if (!catalog.actions.has(actionId))
      problems.add(subject, `names action "${actionId}", which the catalog lacks`);
  return [...new Set(raw)];
}

function readLimits(raw: unknown, subject: string, problems: ProblemList): Limits {
  if (raw === undefined) return {};
  if (!isJsonObject(raw)) {
    problems.add(subject, "limits must be an object");
    return {};
  }
  const limits: Record<string, number> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!LIMIT_KEYS.has(key)) problems.add(subject, `unknown limit "${key}"`);
    else if (key === "maxDelegationDepth" ? !isNonNegativeInt(value) : !isPositiveInt(value)) {
      problems.add(
        subject,
        `limit ${key} must be a ${key === "maxDelegationDepth" ? "non-negative" : "positive"} integer`,
      );
    } else limits[key] = value as number;
  }
  return limits;
}

function readProfile(
  id: string,
  raw: unknown,
  sourcesRaw: unknown,
  problems: ProblemList,
): Profile | undefined {
  const subject = `profile ${id}`;
  if (!isJsonObject(raw)) {
    problems.add(subject, "a profile must be an object with `sources`");
    return undefined;
  }
  const before = problems.size;
  for (const key of Object.keys(raw))
    if (!["description", "sources", "mode"].includes(key))
      problems.add(subject, `unknown key "${key}"`);
  const list = raw["sources"] ?? [];
  if (!Array.isArray(list) || !list.every((x): x is string => typeof x === "string"))
    problems.add(subject, "sources must be a list of source ids");
  else {
    for (const s of list)
      if (!isJsonObject(sourcesRaw) || !Object.hasOwn(sourcesRaw, s))
        problems.add(subject, `names source "${s}", which the policy lacks`);
  }
  const mode = raw["mode"] ?? "live";
  if (mode !== "live" && mode !== "shadow") problems.add(subject, "mode must be live or shadow");
  const description = raw["description"] ?? "";
  if (typeof description !== "string") problems.add(subject, "description must be a string");
  if (problems.size > before) return undefined;
  return {
    id,
    description: description as string,
    sources: [...new Set(list as string[])],
    mode: mode as GrantMode,
  };
}

function isPositiveInt(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v > 0;
}

function isNonNegativeInt(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}
