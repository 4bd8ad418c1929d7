import type { Catalog } from "./catalog.js";
import { assess, ruleHolds, type Assessment } from "./decide.js";
import { caveatsOf, type TaskGrant } from "./grant.js";
import { approversFor, type Policy, type Rule } from "./policy.js";
import type { CallSpec, CaseExpectation } from "./policy-test-suite.js";
import { emptyRun, type RunView } from "./run.js";
import type { ReasonCode, Verdict } from "./verdict.js";

// One call of `charter test` judged: decided (or, in a scenario, the verdict the stateful
// pipeline gave compared), its expectation checked, and the rules it reached counted.

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

/** The rule that decided an assessment under `grant`, by `ruleRef`; undefined when no rule did. */
export function decidingRule(assessment: Assessment, grant: TaskGrant): string | undefined {
  const { rule, verdict } = assessment;
  return rule === undefined
    ? undefined
    : ruleRef(rule, verdict.actionId, caveatsOf(grant, verdict.actionId).rules);
}

/** Each rule the policy states, with its `ruleRef` and the action it is stated for, in the policy's order. */
export function* policyRuleEntries(
  policy: Policy,
): Generator<{ readonly ref: string; readonly actionId: string; readonly rule: Rule }> {
  for (const source of policy.sources.values())
    for (const [actionId, caveats] of source.caveats)
      for (const rule of caveats.rules)
        yield { ref: ruleRef(rule, actionId, caveats.rules), actionId, rule };
}

/** Every rule the policy states, by `ruleRef`, in the order the policy states them. */
export function policyRules(policy: Policy): string[] {
  return [...new Set([...policyRuleEntries(policy)].map((e) => e.ref))];
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

/** Per rule (by `ruleRef`): seen deciding, its condition seen holding, seen failing. */
export type RuleTally = Map<string, { decided: boolean; held: boolean; failed: boolean }>;

/** A verdict without its digest: what a case's expectation is checked against. */
export type SeenVerdict = Omit<Verdict, "callDigest">;

/**
 * Decides `call` under `grant` on `run` and checks it against `want`, counting the rules it
 * reached in `tally`. With `observed` (a scenario's verdict from the stateful pipeline), that
 * verdict is what is checked; the pure decision on the same run names the rule and counts the
 * conditions, and the rule is credited with deciding only where both verdicts agree (a budget the
 * commit refused, LIMIT_EXCEEDED, was decided by no rule).
 */
export function judgeCall(
  call: CallSpec,
  want: CaseExpectation,
  at: { readonly now: number; readonly run: RunView },
  grant: TaskGrant,
  policy: Policy,
  catalog: Catalog,
  tally: RuleTally,
  observed?: SeenVerdict,
): string[] {
  const { now, run } = at;
  const args = call.args ?? {};
  const assessment = assess(
    grant,
    catalog,
    {
      callId: "call_test",
      ...(call.tool === undefined ? {} : { toolName: call.tool }),
      ...(call.action === undefined ? {} : { actionId: call.action }),
      arguments: args,
    },
    { now, run },
  );
  const pure = assessment.verdict;
  const verdict = observed ?? pure;
  const actionId = pure.actionId;
  const rules = actionId === "" ? [] : caveatsOf(grant, actionId).rules;
  const agree = verdict.decision === pure.decision && verdict.reason?.code === pure.reason?.code;
  const decidedBy =
    assessment.rule === undefined || !agree ? undefined : ruleRef(assessment.rule, actionId, rules);
  if (pure.reason === undefined || !BEFORE_RULES.has(pure.reason.code)) {
    for (const rule of rules) {
      const s = tally.get(ruleRef(rule, actionId, rules));
      if (s === undefined) continue;
      if (ruleHolds(catalog, rule, grant, args, now, run)) s.held = true;
      else s.failed = true;
    }
  }
  if (decidedBy !== undefined) {
    const s = tally.get(decidedBy);
    if (s !== undefined) s.decided = true;
  }
  return expectationProblems(want, verdict, decidedBy, policy);
}

/** The run of a one-call case: the labels it says the run has seen (none: no run). */
export function seenRun(seen: readonly string[] | undefined): RunView {
  if (seen === undefined) return emptyRun("");
  return {
    ...emptyRun("run_test"),
    labels: seen.map((label) => ({ label, actionId: "", toolName: "", call: 1 })),
    calls: seen.length === 0 ? 0 : 1,
  };
}

function expectationProblems(
  want: CaseExpectation,
  got: SeenVerdict,
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
