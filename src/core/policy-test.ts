import type { Catalog } from "./catalog.js";
import { compose } from "./compose.js";
import { assess, ruleHolds } from "./decide.js";
import type { TaskGrant } from "./grant.js";
import { caveatsOf } from "./grant.js";
import type { JsonObject } from "./json.js";
import { approversFor, type Policy, type Rule } from "./policy.js";
import { projectCatalog } from "./project.js";
import { emptyRun, type RunView } from "./run.js";
import type { Decision, ReasonCode, Verdict } from "./verdict.js";

// `charter test` (docs/policy-testing.md): test suites state a grant, calls and what each must
// get; the runner composes the grant and decides every call with the same pure `compose` and
// `assess` the server serves, and counts which rules each call saw deciding and which way each
// rule's condition went. Suites arrive checked against schemas/charter-test.schema.json.

/** What one case expects; every field given must match, fields left out are not checked. */
export interface CaseExpectation {
  readonly decision: Decision;
  readonly reason?: ReasonCode;
  readonly requirement?: string;
  readonly approvers?: number;
  readonly rule?: string;
}

export interface TestCase {
  readonly name: string;
  readonly tool?: string;
  readonly action?: string;
  readonly args?: JsonObject;
  /** The run the call belongs to: the labels it has seen (rules over the run are judged on them). */
  readonly run?: { readonly seen?: readonly string[] };
  /** Unix seconds; the suite's `now` when absent. */
  readonly now?: number;
  readonly expect: CaseExpectation;
}

export interface TestSuite {
  readonly suite: string;
  readonly now: number;
  readonly grant: {
    readonly profile: string;
    readonly subject?: string;
    readonly owner?: string;
    readonly purpose?: string;
    readonly actions?: readonly string[];
    readonly shadow?: boolean;
  };
  /** Tool names the grant's catalog must show callable, show as requiring approval, and leave out. */
  readonly catalog?: {
    readonly callable?: readonly string[];
    readonly requiresApproval?: readonly string[];
    readonly absent?: readonly string[];
  };
  readonly cases?: readonly TestCase[];
}

/** One failed expectation: the suite, the case (or "catalog"/"grant") and what differed. */
export interface TestFailure {
  readonly suite: string;
  readonly name: string;
  readonly problem: string;
}

/** How one rule of the policy was exercised: seen deciding, its condition seen holding and failing. */
export interface RuleCoverage {
  readonly rule: string;
  readonly decided: boolean;
  readonly held: boolean;
  readonly failed: boolean;
}

export interface TestReport {
  readonly suites: number;
  readonly cases: number;
  readonly passed: number;
  readonly failures: readonly TestFailure[];
  readonly coverage: readonly RuleCoverage[];
  /** Outcomes covered (decided, held, failed: three per rule) and their total. */
  readonly covered: number;
  readonly total: number;
}

/** The place a rule has in the policy: a rule over the run by its id, else `source:action[i]`. */
export function ruleRef(rule: Rule, actionId: string, rules: readonly Rule[]): string {
  if (rule.id !== undefined) return rule.id;
  let index = 0;
  for (const r of rules) {
    if (r === rule) break;
    if (r.id === undefined && r.source === rule.source) index += 1;
  }
  return `${rule.source}:${actionId}[${index}]`;
}

/** Every rule the policy states, by `ruleRef`, in the order the policy states them. */
export function policyRules(policy: Policy): string[] {
  const refs = new Set<string>();
  for (const source of policy.sources.values())
    for (const [actionId, caveats] of source.caveats)
      for (const rule of caveats.rules) refs.add(ruleRef(rule, actionId, caveats.rules));
  return [...refs];
}

/** Checks at or before the constraints: a call they decide never reaches the rules. */
export const BEFORE_RULES: ReadonlySet<string> = new Set<ReasonCode>([
  "GRANT_EXPIRED",
  "UNKNOWN_ACTION",
  "EXPLICIT_DENY",
  "NOT_GRANTED",
  "INVALID_ARGUMENTS",
  "CONSTRAINT_VIOLATION",
  "TARGET_MISMATCH",
  "UNKNOWN_TARGET_KIND",
  "AGENT_NOT_DELEGATED",
]);

/** Runs the suites against one policy and catalog. Pure: the same suites give the same report. */
export function runPolicyTests(
  suites: readonly TestSuite[],
  policy: Policy,
  catalog: Catalog,
): TestReport {
  const seen = new Map<string, { decided: boolean; held: boolean; failed: boolean }>();
  for (const ref of policyRules(policy))
    seen.set(ref, { decided: false, held: false, failed: false });
  const failures: TestFailure[] = [];
  let cases = 0;
  let passed = 0;
  for (const suite of suites) {
    const fail = (name: string, problem: string) =>
      failures.push({ suite: suite.suite, name, problem });
    const composed = compose(
      {
        profile: suite.grant.profile,
        subject: suite.grant.subject ?? "agent:test",
        owner: suite.grant.owner ?? "owner:test",
        purpose: suite.grant.purpose ?? "charter test",
        ...(suite.grant.actions === undefined ? {} : { requestedActions: suite.grant.actions }),
        ...(suite.grant.shadow === true ? { mode: "shadow" as const } : {}),
      },
      policy,
      catalog,
      suite.now,
      "grt_test",
    );
    if (composed.kind !== "granted") {
      const why =
        composed.kind === "denied"
          ? `${composed.code}: ${composed.message}`
          : `UNKNOWN_ACTION: ${composed.source} names "${composed.actionId}"`;
      fail("grant", `the grant cannot be composed (${why})`);
      cases += suite.cases?.length ?? 0;
      continue;
    }
    const grant = composed.grant;
    for (const problem of catalogProblems(suite, grant, catalog)) fail("catalog", problem);
    for (const c of suite.cases ?? []) {
      cases += 1;
      const problems = runCase(c, suite, grant, policy, catalog, seen);
      if (problems.length === 0) passed += 1;
      for (const p of problems) fail(c.name, p);
    }
  }
  const coverage = [...seen].map(([rule, s]) => ({ rule, ...s }));
  const covered = coverage.reduce(
    (n, c) => n + Number(c.decided) + Number(c.held) + Number(c.failed),
    0,
  );
  return {
    suites: suites.length,
    cases,
    passed,
    failures,
    coverage,
    covered,
    total: coverage.length * 3,
  };
}

function runCase(
  c: TestCase,
  suite: TestSuite,
  grant: TaskGrant,
  policy: Policy,
  catalog: Catalog,
  seen: Map<string, { decided: boolean; held: boolean; failed: boolean }>,
): string[] {
  const now = c.now ?? suite.now;
  const run = runOf(c);
  const args = c.args ?? {};
  const assessment = assess(
    grant,
    catalog,
    {
      callId: "call_test",
      ...(c.tool === undefined ? {} : { toolName: c.tool }),
      ...(c.action === undefined ? {} : { actionId: c.action }),
      arguments: args,
    },
    { now, run },
  );
  const verdict = assessment.verdict;
  const actionId = verdict.actionId;
  const rules = actionId === "" ? [] : caveatsOf(grant, actionId).rules;
  const decidedBy =
    assessment.rule === undefined ? undefined : ruleRef(assessment.rule, actionId, rules);
  if (verdict.reason === undefined || !BEFORE_RULES.has(verdict.reason.code)) {
    for (const rule of rules) {
      const s = seen.get(ruleRef(rule, actionId, rules));
      if (s === undefined) continue;
      if (ruleHolds(catalog, rule, grant, args, now, run)) s.held = true;
      else s.failed = true;
    }
  }
  if (decidedBy !== undefined) {
    const s = seen.get(decidedBy);
    if (s !== undefined) s.decided = true;
  }
  return expectationProblems(c.expect, verdict, decidedBy, policy);
}

function runOf(c: TestCase): RunView {
  const labels = c.run?.seen ?? [];
  if (c.run === undefined) return emptyRun("");
  return {
    ...emptyRun("run_test"),
    labels: labels.map((label) => ({ label, actionId: "", toolName: "", call: 1 })),
    calls: labels.length === 0 ? 0 : 1,
  };
}

function expectationProblems(
  want: CaseExpectation,
  got: Omit<Verdict, "callDigest">,
  rule: string | undefined,
  policy: Policy,
): string[] {
  const problems: string[] = [];
  const reason = got.reason?.code;
  const said = `${got.decision}${reason === undefined ? "" : ` (${reason})`}`;
  if (got.decision !== want.decision)
    problems.push(`expected decision ${want.decision}, got ${said}`);
  if (want.reason !== undefined && reason !== want.reason)
    problems.push(`expected reason ${want.reason}, got ${reason ?? "none"}`);
  if (want.requirement !== undefined && got.requirement !== want.requirement)
    problems.push(`expected requirement ${want.requirement}, got ${got.requirement ?? "none"}`);
  if (want.approvers !== undefined) {
    const n = got.requirement === undefined ? 0 : approversFor(policy, got.requirement);
    if (n !== want.approvers) problems.push(`expected ${want.approvers} approvers, got ${n}`);
  }
  if (want.rule !== undefined && rule !== want.rule)
    problems.push(`expected rule ${want.rule} to decide, got ${rule ?? "no rule"}`);
  return problems;
}

function catalogProblems(suite: TestSuite, grant: TaskGrant, catalog: Catalog): string[] {
  const want = suite.catalog;
  if (want === undefined) return [];
  const view = projectCatalog(grant, catalog);
  const status = new Map(view.tools.map((e) => [e.name, e.status]));
  const problems: string[] = [];
  for (const name of want.callable ?? [])
    if (status.get(name) !== "callable")
      problems.push(`expected tool ${name} callable, got ${status.get(name) ?? "absent"}`);
  for (const name of want.requiresApproval ?? [])
    if (status.get(name) !== "requires_approval")
      problems.push(
        `expected tool ${name} to require approval, got ${status.get(name) ?? "absent"}`,
      );
  for (const name of want.absent ?? [])
    if (status.has(name))
      problems.push(`expected tool ${name} absent, got ${status.get(name) ?? "absent"}`);
  return problems;
}

/**
 * Whether `covered` of `total` reaches `threshold` percent, compared exactly: a decimal text such
 * as "100" or "87.5" against the ratio, in integers (no rounding ever lets a shortfall pass).
 */
export function coverageReaches(covered: number, total: number, threshold: string): boolean {
  const m = /^(\d{1,3})(?:\.(\d{1,6}))?$/.exec(threshold);
  if (m === null) throw new RangeError(`threshold "${threshold}" is not a percentage`);
  const decimals = m[2] ?? "";
  const scaled = BigInt(`${m[1] ?? "0"}${decimals}`);
  const scale = 10n ** BigInt(decimals.length);
  if (total === 0) return true;
  return BigInt(covered) * 100n * scale >= scaled * BigInt(total);
}
