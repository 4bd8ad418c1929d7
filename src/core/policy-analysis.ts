import type { Catalog } from "./catalog.js";
import { compose } from "./compose.js";
import { assess, DEFAULT_REQUIREMENT, ruleHolds } from "./decide.js";
import { caveatsOf, type TaskGrant } from "./grant.js";
import type { JsonObject } from "./json.js";
import { unmeetable, type ApproverDirectory } from "./approval-analysis.js";
import type { Policy, Rule } from "./policy.js";
import { BEFORE_RULES, ruleRef } from "./policy-test.js";
import { decidingRule } from "./policy-test-case.js";
import { sampleCalls, type SampleCall } from "./sample-calls.js";
import type { Decision } from "./verdict.js";

export type { ApproverDirectory } from "./approval-analysis.js";

// `charter analyze` (docs/policy-analysis.md): what a policy can never do, found by composing
// every profile and deciding sample calls (sample-calls.ts) with the same pure compose and assess
// the server serves. Each finding has a severity and, where one exists, a counterexample: a call
// and the verdict it gets. Conditions are judged over the sampled calls, not proved.

export const SEVERITIES = ["info", "warning", "error"] as const;
export type Severity = (typeof SEVERITIES)[number];

export type FindingKind =
  | "shadowed-rule"
  | "redundant-rule"
  | "condition-always-true"
  | "condition-never-true"
  | "never-callable"
  | "unmeetable-approval"
  | "profile-not-composable";

/** A call and the verdict it gets: what makes a finding concrete. */
export interface Counterexample {
  readonly profile: string;
  readonly action: string;
  readonly tool: string;
  readonly arguments: JsonObject;
  readonly verdict: {
    readonly decision: Decision;
    readonly reason?: string;
    readonly requirement?: string;
    readonly rule?: string;
  };
}

export interface Finding {
  readonly kind: FindingKind;
  readonly severity: Severity;
  /** What the finding is about: a rule (`source:action[i]`), a profile, a requirement. */
  readonly subject: string;
  readonly message: string;
  readonly counterexample?: Counterexample;
}

export interface AnalysisOptions {
  /** Unix seconds the grants are composed and the samples decided at. */
  readonly now: number;
  /** When given, each requirement is checked against the approvers it can have. */
  readonly approvers?: ApproverDirectory;
}

/** Whether `severity` is at or above `threshold`. */
export function atOrAbove(severity: Severity, threshold: Severity): boolean {
  return SEVERITIES.indexOf(severity) >= SEVERITIES.indexOf(threshold);
}

interface Decided {
  readonly sample: SampleCall;
  readonly verdict: Counterexample["verdict"];
  /** Whether the call reached the rules (nothing before them decided it). */
  readonly reached: boolean;
}

/** Analyzes `policy` over `catalog`. Pure: the same inputs give the same findings, in the same order. */
export function analyzePolicy(
  policy: Policy,
  catalog: Catalog,
  options: AnalysisOptions,
): Finding[] {
  const findings = new Map<string, Finding>();
  const add = (f: Finding) => {
    const key = `${f.kind} ${f.subject}`;
    if (!findings.has(key)) findings.set(key, f);
  };
  const held = new Map<string, Counterexample | undefined>();
  for (const profile of policy.profiles.values()) {
    const composed = compose(
      {
        profile: profile.id,
        subject: "agent:analyze",
        owner: "owner:analyze",
        purpose: "charter analyze",
      },
      policy,
      catalog,
      options.now,
      "grt_analyze",
    );
    if (composed.kind !== "granted") {
      const why = composed.kind === "denied" ? composed.code : "UNKNOWN_ACTION";
      add({
        kind: "profile-not-composable",
        severity: why === "SOURCE_SUSPENDED" ? "info" : "warning",
        subject: `profile ${profile.id}`,
        message: `no grant can be composed for it (${why}${composed.kind === "denied" ? `: ${composed.message}` : ""})`,
      });
      continue;
    }
    // Shadow profiles are analyzed as live: their verdicts are the live ones, suppressed.
    const grant: TaskGrant = { ...composed.grant, mode: "live" };
    const decideOne = (sample: SampleCall): Decided => {
      const a = assess(
        grant,
        catalog,
        { callId: "call_analyze", actionId: sample.actionId, arguments: sample.arguments },
        { now: options.now },
      );
      const v = a.verdict;
      const rule = decidingRule(a, grant);
      return {
        sample,
        reached: v.reason === undefined || !BEFORE_RULES.has(v.reason.code),
        verdict: {
          decision: v.decision,
          ...(v.reason === undefined ? {} : { reason: v.reason.code }),
          ...(v.requirement === undefined ? {} : { requirement: v.requirement }),
          ...(rule === undefined ? {} : { rule }),
        },
      };
    };
    const example = (d: Decided): Counterexample => ({
      profile: profile.id,
      action: d.sample.actionId,
      tool: d.sample.toolName,
      arguments: d.sample.arguments,
      verdict: d.verdict,
    });
    neverCallable(policy, profile.id, grant, catalog, (s) => example(decideOne(s))).forEach(add);
    for (const actionId of [...grant.allowed, ...grant.approvalRequired]) {
      const decided = sampleCalls(catalog, actionId, [caveatsOf(grant, actionId)]).map(decideOne);
      for (const d of decided)
        if (d.verdict.requirement !== undefined && !held.has(d.verdict.requirement))
          held.set(d.verdict.requirement, example(d));
      ruleFindings(catalog, grant, actionId, decided, options.now, example).forEach(add);
    }
    if (grant.approvalRequired.length > 0 && !held.has(DEFAULT_REQUIREMENT))
      held.set(DEFAULT_REQUIREMENT, undefined);
    for (const rules of Object.values(grant.caveats))
      for (const r of rules.rules)
        if (r.then === "require_approval" && !held.has(r.requirement))
          held.set(r.requirement, undefined);
  }
  if (options.approvers !== undefined) unmeetable(policy, options.approvers, held).forEach(add);
  return [...findings.values()];
}

/** Actions a profile's sources list (allow or approval) that its grant leaves out: denied or narrowed away. */
function neverCallable(
  policy: Policy,
  profileId: string,
  grant: TaskGrant,
  catalog: Catalog,
  example: (s: SampleCall) => Counterexample,
): Finding[] {
  const profile = policy.profiles.get(profileId);
  const sources = [...policy.sources.values()].filter(
    (s) =>
      s.kind === "grant" && s.status === "active" && (s.global || profile?.sources.includes(s.id)),
  );
  const held = new Set([...grant.allowed, ...grant.approvalRequired]);
  const denied = new Set(grant.denied);
  const listed = [...new Set(sources.flatMap((s) => [...s.allow, ...s.approval]))].filter(
    (id) => !held.has(id),
  );
  const out: Finding[] = [];
  for (const [cause, ids, severity] of [
    ["a deny list", listed.filter((id) => denied.has(id)), "warning"],
    ["a narrow source", listed.filter((id) => !denied.has(id)), "info"],
  ] as const) {
    const [first] = ids;
    if (first === undefined) continue;
    const [sample] = sampleCalls(catalog, first, []);
    out.push({
      kind: "never-callable",
      severity,
      subject: `profile ${profileId}`,
      message: `${ids.length} action(s) its sources list are never callable, left out by ${cause}: ${ids.join(", ")}`,
      ...(sample === undefined ? {} : { counterexample: example(sample) }),
    });
  }
  return out;
}

/** Shadowed, redundant, always-true and never-true rules over the arguments of one action. */
function ruleFindings(
  catalog: Catalog,
  grant: TaskGrant,
  actionId: string,
  decided: readonly Decided[],
  now: number,
  example: (d: Decided) => Counterexample,
): Finding[] {
  const all = caveatsOf(grant, actionId).rules;
  // Rules over the run hold only in some runs: they are left to `charter test` (docs/policy-analysis.md).
  const rules = all.filter((r) => r.run === undefined);
  const reached = decided.filter((d) => d.reached);
  if (rules.length === 0 || reached.length === 0) return [];
  const holds = new Map<Rule, boolean[]>(
    rules.map((r) => [
      r,
      reached.map((d) => ruleHolds(catalog, r, grant, d.sample.arguments, now)),
    ]),
  );
  const decider = (i: number, among: readonly Rule[]): Rule | undefined =>
    among.find((r) => r.then === "deny" && holds.get(r)?.[i] === true) ??
    among.find((r) => r.then === "require_approval" && holds.get(r)?.[i] === true);
  const listed = grant.approvalRequired.includes(actionId);
  const outcome = (r: Rule | undefined): string =>
    r === undefined
      ? listed
        ? `require_approval ${DEFAULT_REQUIREMENT}`
        : "allow"
      : r.then === "deny"
        ? `deny ${r.reason}`
        : `require_approval ${r.requirement}`;
  const out: Finding[] = [];
  const n = reached.length;
  for (const rule of rules) {
    const ref = ruleRef(rule, actionId, all);
    const h = holds.get(rule) ?? [];
    const holding = h.flatMap((b, i) => (b ? [i] : []));
    if (holding.length === 0) {
      out.push({
        kind: "condition-never-true",
        severity: "warning",
        subject: ref,
        message: `its condition held for none of the ${n} sampled calls that reach the rules`,
      });
      continue;
    }
    const at = (i: number) => example(reached[i] as Decided);
    if (holding.length === n && n > 1)
      out.push({
        kind: "condition-always-true",
        severity: "warning",
        subject: ref,
        message: `its condition held for all ${n} sampled calls that reach the rules`,
        counterexample: at(0),
      });
    const decides = holding.filter((i) => decider(i, rules) === rule);
    const [firstHeld] = holding;
    if (decides.length === 0 && firstHeld !== undefined) {
      const by = decider(firstHeld, rules);
      out.push({
        kind: "shadowed-rule",
        severity: "error",
        subject: ref,
        message: `it can never decide: every sampled call it holds for is decided first by ${by === undefined ? "another rule" : ruleRef(by, actionId, all)}${by?.then === "deny" ? " (deny rules are checked first)" : ""}`,
        counterexample: at(firstHeld),
      });
      continue;
    }
    const without = rules.filter((r) => r !== rule);
    const [firstDecided] = decides;
    if (
      firstDecided !== undefined &&
      decides.every((i) => outcome(decider(i, without)) === outcome(rule))
    )
      out.push({
        kind: "redundant-rule",
        severity: "warning",
        subject: ref,
        message: `removing it changes no sampled verdict: without it each call it decides still gets ${outcome(rule)}`,
        counterexample: at(firstDecided),
      });
  }
  return out;
}
