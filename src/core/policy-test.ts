import type { Catalog } from "./catalog.js";
import type { TaskGrant } from "./grant.js";
import { canonicalJson } from "./digest.js";
import type { Policy, Rule } from "./policy.js";
import {
  judgeCall,
  policyRuleEntries,
  policyRules,
  seenRun,
  type RuleTally,
  type SeenVerdict,
} from "./policy-test-case.js";
import { suiteGrant } from "./policy-test-grant.js";
import {
  expectationFor,
  isScenario,
  suiteProfiles,
  type CaseExpectation,
  type ScenarioCase,
  type CaseExpect,
  type TestSuite,
} from "./policy-test-suite.js";
import { projectCatalog } from "./project.js";
import type { RunView } from "./run.js";

export { BEFORE_RULES, policyRules, ruleRef } from "./policy-test-case.js";
export type {
  CallCase,
  CallSpec,
  CaseExpect,
  CaseExpectation,
  ScenarioCall,
  ScenarioCase,
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

/** What the stateful pipeline answered each call of a scenario, and the run it was decided on. */
export interface ObservedCall {
  readonly verdict: SeenVerdict;
  readonly run: RunView;
}

/** A scenario as the stateful pipeline ran it, or why it could not be run. */
export type ObservedScenario =
  | { readonly kind: "observed"; readonly calls: readonly ObservedCall[] }
  | { readonly kind: "failed"; readonly message: string };

/** The observed scenarios by suite (its index), profile and case (its index in the suite). */
export type ScenarioObservations = (
  suite: number,
  profile: string,
  kase: number,
) => ObservedScenario | undefined;

/**
 * Runs the suites against one policy and catalog. Pure: the same suites (and observations) give
 * the same report. A multi-call scenario needs state, so it is judged from `observed`, what the
 * application layer's pipeline answered (src/app/policy-scenarios.ts); without it, it fails.
 */
export function runPolicyTests(
  suites: readonly TestSuite[],
  policy: Policy,
  catalog: Catalog,
  observed: ScenarioObservations = () => undefined,
): TestReport {
  const seen: RuleTally = new Map();
  for (const ref of policyRules(policy))
    seen.set(ref, { decided: false, held: false, failed: false });
  const failures: TestFailure[] = [];
  let cases = 0;
  let passed = 0;
  for (const [index, suite] of suites.entries()) {
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
      for (const [k, c] of (suite.cases ?? []).entries()) {
        cases += 1;
        const problems = isScenario(c)
          ? scenarioProblems(
              c,
              suite.now,
              observed(index, profile, k),
              profile,
              grant,
              policy,
              catalog,
              seen,
            )
          : cellProblems(profile, c.expect, (want) =>
              judgeCall(
                c,
                want,
                {
                  now: c.now ?? suite.now,
                  run: seenRun(c.run === undefined ? undefined : (c.run.seen ?? [])),
                },
                grant,
                policy,
                catalog,
                seen,
              ),
            );
        if (problems.length === 0) passed += 1;
        for (const p of problems) fail(cell(c.name), p);
      }
    }
  }
  const coverage = [...seen].map(([rule, s]) => ({ rule, ...s }));
  return {
    suites: suites.length,
    cases,
    passed,
    failures,
    coverage,
    covered: coveredOutcomes(coverage),
    total: coverage.length * 3,
  };
}

function cellProblems(
  profile: string,
  expect: CaseExpect,
  judge: (want: CaseExpectation) => string[],
): string[] {
  const want = expectationFor(expect, profile);
  return want === undefined ? [`no expectation for profile ${profile}`] : judge(want);
}

/** A scenario's calls, each checked against what the pipeline answered it, in order. */
function scenarioProblems(
  c: ScenarioCase,
  now: number,
  got: ObservedScenario | undefined,
  profile: string,
  grant: TaskGrant,
  policy: Policy,
  catalog: Catalog,
  seen: RuleTally,
): string[] {
  if (got === undefined) return ["a multi-call scenario needs the stateful pipeline; none ran it"];
  if (got.kind === "failed") return [`the scenario could not be run: ${got.message}`];
  return c.calls.flatMap((call, i) => {
    const at = got.calls[i];
    const problems =
      at === undefined
        ? ["the pipeline did not answer this call"]
        : cellProblems(profile, call.expect, (want) =>
            judgeCall(
              call,
              want,
              { now: call.now ?? now, run: at.run },
              grant,
              policy,
              catalog,
              seen,
              at.verdict,
            ),
          );
    return problems.map((p) => `call ${i + 1}: ${p}`);
  });
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

/**
 * The rules of `after` that are new or whose definition differs from `before`'s rule of the same
 * name (`ruleRef`), in `after`'s order: what `--changed-since` reports coverage of. A rule over
 * the run is one rule over all its actions; a rule over the arguments is named by its place, so a
 * rule inserted before others of its source and action changes the names after it too (they are
 * reported, never missed).
 */
export function changedRules(before: Policy, after: Policy): string[] {
  const old = ruleDefinitions(before);
  return [...ruleDefinitions(after)].filter(([ref, text]) => old.get(ref) !== text).map(([r]) => r);
}

/** Each rule's definition as canonical JSON text, by `ruleRef`: the rule and the actions it applies to. */
function ruleDefinitions(policy: Policy): Map<string, string> {
  const byRef = new Map<string, { actions: string[]; rule: Rule }>();
  for (const { ref, actionId, rule } of policyRuleEntries(policy)) {
    const entry = byRef.get(ref);
    if (entry === undefined) byRef.set(ref, { actions: [actionId], rule });
    else entry.actions.push(actionId);
  }
  return new Map(
    [...byRef].map(([ref, { actions, rule }]) => [
      ref,
      canonicalJson({ actions: [...actions].sort(), rule }),
    ]),
  );
}

/** The report with its coverage narrowed to `rules` (the cases and failures as they were). */
export function coverageOf(report: TestReport, rules: readonly string[]): TestReport {
  const keep = new Set(rules);
  const coverage = report.coverage.filter((c) => keep.has(c.rule));
  return { ...report, coverage, covered: coveredOutcomes(coverage), total: coverage.length * 3 };
}

function coveredOutcomes(coverage: readonly RuleCoverage[]): number {
  return coverage.reduce((n, c) => n + Number(c.decided) + Number(c.held) + Number(c.failed), 0);
}
