import type { CatalogAction } from "./catalog.js";
import type { TaskGrant } from "./grant.js";
import { isJsonObject, type JsonSchema } from "./json.js";
import type { Rule } from "./policy.js";
import { pointerSegments } from "./summary-paths.js";

// Runs (DESIGN §7): what a run has read and done, as the pure core sees it. The shell reads the
// run's state from the store (`RunView`), decide judges the call on it, and the shell writes what
// an allowed call adds (`runEffects`) in the same unit of work as the decision.

/** The labels Charter knows without a catalog declaring them: what the Rule of Two is about. */
export const UNTRUSTED = "untrusted";
export const PRIVATE = "private";

/** Whose calls a window counts: one run's, one task's (the root grant and its sub-agents), one subject's or one owner's. */
export type WindowScope = "run" | "grant" | "subject" | "owner";
export const WINDOW_SCOPES: readonly WindowScope[] = ["run", "grant", "subject", "owner"];

/** A sliding window over allowed calls: at most `maxCalls` calls, or a `sum` of an argument at most `max`. */
export interface RunWindow {
  readonly seconds: number;
  readonly per: WindowScope;
  readonly maxCalls?: number;
  /** `path`: a JSON Pointer into the arguments, a number the schema declares. */
  readonly sum?: { readonly path: string; readonly max: number };
}

/** What a rule asks of the run, besides its `when` over the arguments. Every part set must hold. */
export interface RunCondition {
  /** Labels the run must have seen, every one of them. */
  readonly seen?: readonly string[];
  /** One of these actions was allowed earlier in the run (within `within` seconds, when set). */
  readonly after?: readonly string[];
  readonly within?: number;
  /** The call would take the window past its limit (counting the calls allowed and in flight). */
  readonly window?: RunWindow;
}

/** A label the run has seen, with the call that first brought it (`call`: its position among the run's allowed calls, from 1). */
export interface SeenLabel {
  readonly label: string;
  readonly actionId: string;
  readonly toolName: string;
  readonly call: number;
}

/** What a window has counted: calls and their sum, in flight included. */
export interface WindowUsage {
  readonly calls: number;
  readonly sum: number;
}

/**
 * The run a call belongs to, as the shell read it before deciding: its labels (its own and those
 * that flow to it along the delegation tree), its allowed calls, when each action was last
 * allowed, and the usage of the windows the call's rules count in. `runId` "" stands for a call
 * without a run: only windows not scoped to a run apply to it.
 */
export interface RunView {
  readonly runId: string;
  readonly labels: readonly SeenLabel[];
  readonly calls: number;
  /** Action id -> Unix seconds of its last allowed call in the run. */
  readonly last: Readonly<Record<string, number>>;
  /** Window key (`windowKey`) -> usage. A window not listed has counted nothing. */
  readonly windows: Readonly<Record<string, WindowUsage>>;
}

/** An empty run: what a run is before its first call. */
export function emptyRun(runId: string): RunView {
  return { runId, labels: [], calls: 0, last: {}, windows: {} };
}

/**
 * What an action's result brings into the run, when its `when` over the arguments holds (always,
 * without one). Two entries depend on the result itself, which only a door that saw it knows
 * (ReportResult): `ifResult`, labels only a reported result matching it brings in (never static);
 * `unlessResult`, static labels a reported result matching it takes back, for that one call,
 * while no later decision of the run has been judged on them (mail from inside the organisation
 * is not untrusted).
 */
export interface ResultLabels {
  readonly labels: readonly string[];
  readonly when?: JsonSchema;
  readonly ifResult?: JsonSchema;
  readonly unlessResult?: JsonSchema;
}

/**
 * What a reported result does to its call's run (`ReportResult`): the labels its content brings in
 * (`ifResult` entries it matches) and those it takes back (`unlessResult` entries it matches,
 * less any label another entry brings in regardless). A schema that cannot be evaluated brings
 * its labels in and takes nothing back (fail closed).
 */
export function reportedLabels(
  action: CatalogAction,
  result: unknown,
  matches: (schema: JsonSchema, value: unknown) => boolean | undefined,
): { readonly add: readonly string[]; readonly drop: readonly string[] } {
  const add = new Set<string>();
  const drop = new Set<string>();
  const kept = new Set<string>();
  for (const r of action.results ?? []) {
    if (r.ifResult !== undefined) {
      if (matches(r.ifResult, result) !== false) r.labels.forEach((l) => add.add(l));
    } else if (r.unlessResult !== undefined && matches(r.unlessResult, result) === true) {
      r.labels.forEach((l) => drop.add(l));
    } else r.labels.forEach((l) => kept.add(l));
  }
  return {
    add: [...add].sort(),
    drop: [...drop].filter((l) => !kept.has(l) && !add.has(l)).sort(),
  };
}

/**
 * The key a window's usage is counted under: the rule's id and the scope's value. One rule that
 * applies to several actions counts them in one window.
 */
export function windowKey(
  ruleId: string,
  per: WindowScope,
  grant: TaskGrant,
  runId: string,
): string {
  const scope =
    per === "run"
      ? `run:${grant.id}:${runId}`
      : per === "grant"
        ? `grant:${grant.rootId}`
        : per === "subject"
          ? `subject:${grant.subject}`
          : `owner:${grant.owner}`;
  return `${ruleId}|${scope}`;
}

/** What the shell must read of a run to decide a call of `actionId`: earlier actions and windows. */
export interface RunNeeds {
  readonly after: readonly string[];
  readonly windows: readonly { readonly key: string; readonly seconds: number }[];
  /** Whether any of the action's rules looks at the run at all. */
  readonly any: boolean;
}

const NO_NEEDS: RunNeeds = { after: [], windows: [], any: false };

/** The run state the rules of `actionId` under `grant` read (nothing for an action without run rules). */
export function runNeeds(grant: TaskGrant, actionId: string, runId: string): RunNeeds {
  const rules = Object.hasOwn(grant.caveats, actionId) ? grant.caveats[actionId]?.rules : undefined;
  if (!rules || !rules.some((r) => r.run !== undefined)) return NO_NEEDS;
  const after = new Set<string>();
  const windows = new Map<string, number>();
  for (const rule of rules) {
    const run = rule.run;
    if (!run) continue;
    for (const a of run.after ?? []) after.add(a);
    const w = run.window;
    if (w && (runId !== "" || w.per !== "run"))
      windows.set(windowKey(ruleIdOf(rule), w.per, grant, runId), w.seconds);
  }
  return {
    after: [...after].sort(),
    windows: [...windows].map(([key, seconds]) => ({ key, seconds })),
    any: true,
  };
}

/** A rule's id: given by the policy for run rules; its source otherwise. */
export function ruleIdOf(rule: Rule): string {
  return rule.id ?? rule.source;
}

/**
 * The number a window sums from the arguments, or undefined when the path does not hold a
 * finite number of zero or more — such a call is judged as going past the window (fail closed:
 * a negative amount would otherwise make room, a missing one would count as nothing).
 */
export function windowAmount(window: RunWindow, args: unknown): number | undefined {
  if (!window.sum) return 0;
  let value: unknown = args;
  for (const segment of pointerSegments(window.sum.path) ?? []) {
    if (!isJsonObject(value) || !Object.hasOwn(value, segment)) return undefined;
    value = value[segment];
  }
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * Whether `rule`'s run condition holds for a call with `args` at `now` in `run` (the rule's
 * `when` is checked by the caller). A condition on the run's labels or earlier calls never holds
 * for a call without a run (`runId` ""), nor does a window counted per run.
 */
export function runConditionHolds(
  rule: Rule,
  grant: TaskGrant,
  args: unknown,
  now: number,
  run: RunView,
): boolean {
  const cond = rule.run;
  if (!cond) return true;
  const inRun = run.runId !== "";
  if (cond.seen && !(inRun && cond.seen.every((l) => run.labels.some((s) => s.label === l))))
    return false;
  if (cond.after) {
    if (!inRun) return false;
    const recent = cond.after.some((a) => {
      const at = run.last[a];
      return at !== undefined && (cond.within === undefined || now - at <= cond.within);
    });
    if (!recent) return false;
  }
  const w = cond.window;
  if (w) {
    if (w.per === "run" && !inRun) return false;
    const usage = run.windows[windowKey(ruleIdOf(rule), w.per, grant, run.runId)] ?? NO_USAGE;
    const amount = windowAmount(w, args);
    if (amount === undefined) return true;
    const overCalls = w.maxCalls !== undefined && usage.calls + 1 > w.maxCalls;
    const overSum = w.sum !== undefined && usage.sum + amount > w.sum.max;
    if (!overCalls && !overSum) return false;
  }
  return true;
}

const NO_USAGE: WindowUsage = { calls: 0, sum: 0 };

/** One window an allowed call is counted in; `maxCalls`/`maxSum` set when the store must refuse a charge past them. */
export interface WindowCharge {
  readonly key: string;
  readonly seconds: number;
  readonly amount: number;
  readonly maxCalls?: number;
  readonly maxSum?: number;
}

/**
 * What an allowed call of `action` adds to its run: the labels its result brings in (each
 * `results` entry whose `when` holds; one that cannot be evaluated applies) and a charge in each
 * window of its rules whose `when` holds — bounded by the window's limits, unless `approvedRule`
 * (the rule whose approval the call presents) is that window's rule.
 */
export interface RunEffects {
  readonly labels: readonly string[];
  readonly windows: readonly WindowCharge[];
}

export function runEffects(
  grant: TaskGrant,
  action: CatalogAction,
  args: unknown,
  runId: string,
  matches: (schema: JsonSchema, args: unknown) => boolean,
  approvedRule: string | undefined,
): RunEffects {
  const labels = new Set<string>();
  for (const r of action.results ?? []) {
    // Labels only a reported result brings in are never static.
    if (r.ifResult !== undefined) continue;
    if (r.when === undefined || matches(r.when, args)) for (const l of r.labels) labels.add(l);
  }
  const windows: WindowCharge[] = [];
  const rules = Object.hasOwn(grant.caveats, action.id) ? grant.caveats[action.id]?.rules : [];
  for (const rule of rules ?? []) {
    const w = rule.run?.window;
    if (!w || (w.per === "run" && runId === "") || !matches(rule.when, args)) continue;
    const id = ruleIdOf(rule);
    const amount = windowAmount(w, args) ?? 0;
    const bounded = approvedRule !== id;
    windows.push({
      key: windowKey(id, w.per, grant, runId),
      seconds: w.seconds,
      amount,
      ...(bounded && w.maxCalls !== undefined ? { maxCalls: w.maxCalls } : {}),
      ...(bounded && w.sum !== undefined ? { maxSum: w.sum.max } : {}),
    });
  }
  return { labels: [...labels].sort(), windows };
}
