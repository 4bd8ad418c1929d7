import type { Catalog } from "./catalog.js";
import { assess, ruleHolds } from "./decide.js";
import type { TaskGrant } from "./grant.js";
import { caveatsOf } from "./grant.js";
import { approversFor, type Policy, type Rule } from "./policy.js";
import { suiteGrant } from "./policy-test-grant.js";
import {
  isSingleExpectation,
  suiteProfiles,
  type CaseExpectation,
  type TestCase,
  type TestSuite,
} from "./policy-test-suite.js";
import { projectCatalog } from "./project.js";
import { emptyRun, type RunView } from "./run.js";
import type { ReasonCode, Verdict } from "./verdict.js";

export type {
  CaseExpect,
  CaseExpectation,
  SuiteDelegation,
  SuiteGrant,
  TestCase,
  TestSuite,
} from "./policy-test-suite.js";

// `charter test` (docs/policy-testing.md): test suites state a grant, calls and what each must
// get; the runner composes the grant and decides every call with the same pure `compose` and
// `assess` the server serves, and counts which rules each call saw deciding and which way each
// rule's condition went. Suites arrive checked against schemas/charter-test.schema.json. A suite
// with `profiles` (the matrix form) decides every case under each profile, reported as
// `case [profile]`; a suite that delegates decides its cases under the child grant.

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
    const profiles = suiteProfiles(suite);
    const matrix = suite.grant.profiles !== undefined;
    for (const profile of profiles) {
      const cell = (name: string) => (matrix ? `${name} [${profile}]` : name);
      const got = suiteGrant(suite, profile, policy, catalog);
      if (suite.expect !== undefined) {
        cases += 1;
        const want = suite.expect.refused;
        if (got.kind === "refused" && got.code === want) passed += 1;
        else
          fail(
            cell("grant"),
            got.kind === "refused"
              ? `expected the grant refused with ${want}, got ${got.code}: ${got.message}`
              : `expected the grant refused with ${want}, got it granted`,
          );
        continue;
      }
      if (got.kind === "refused") {
        fail(cell("grant"), `the grant cannot be made (${got.code}: ${got.message})`);
        cases += suite.cases?.length ?? 0;
        continue;
      }
      const grant = got.grant;
      for (const problem of catalogProblems(suite, grant, catalog)) fail(cell("catalog"), problem);
      for (const c of suite.cases ?? []) {
        cases += 1;
        const want = isSingleExpectation(c.expect)
          ? c.expect
          : Object.hasOwn(c.expect, profile)
            ? c.expect[profile]
            : undefined;
        const problems =
          want === undefined
            ? [`no expectation for profile ${profile}`]
            : runCase(c, want, suite, grant, policy, catalog, seen);
        if (problems.length === 0) passed += 1;
        for (const p of problems) fail(cell(c.name), p);
      }
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
  want: CaseExpectation,
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
  return expectationProblems(want, verdict, decidedBy, policy);
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
