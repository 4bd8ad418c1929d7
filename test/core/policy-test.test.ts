import { describe, expect, it } from "vitest";
import { assess } from "../../src/core/decide.js";
import {
  coverageReaches,
  policyRules,
  ruleRef,
  runPolicyTests,
  type TestCase,
  type TestSuite,
} from "../../src/core/policy-test.js";
import { caveatsOf } from "../../src/core/grant.js";
import { demoGrant, demoPair } from "../support/demo.js";

const NOW = 1_767_225_600;
const refund = (amount: number) => ({
  order_id: "ord_A1B2C3",
  amount,
  currency: "EUR",
  reason: "other",
});
const suite = (cases: readonly TestCase[], extra: Pick<TestSuite, "catalog"> = {}): TestSuite => ({
  suite: "s",
  now: NOW,
  grant: { profile: "owner-assistant" },
  cases,
  ...extra,
});

describe("decide names the rule that decided", () => {
  const { catalog } = demoPair();
  const grant = demoGrant("owner-assistant", NOW);
  const decideRefund = (amount: number) =>
    assess(
      grant,
      catalog,
      { callId: "c", toolName: "issue_refund", arguments: refund(amount) },
      { now: NOW },
    );

  it("the deny rule, the approval rule, and none for an allow", () => {
    const rules = caveatsOf(grant, "refund.issue").rules;
    const deny = decideRefund(5000);
    expect(deny.verdict.reason?.code).toBe("RULE_DENY");
    expect(deny.rule && ruleRef(deny.rule, "refund.issue", rules)).toBe(
      "owner-assistant:refund.issue[0]",
    );
    const held = decideRefund(250);
    expect(held.verdict.decision).toBe("require_approval");
    expect(held.rule && ruleRef(held.rule, "refund.issue", rules)).toBe(
      "owner-assistant:refund.issue[1]",
    );
    expect(decideRefund(40).rule).toBeUndefined();
  });
});

describe("runPolicyTests", () => {
  const { catalog, policy } = demoPair();

  it("lists every rule of the policy, argument rules by place and run rules by id", () => {
    const rules = policyRules(policy);
    expect(rules).toContain("owner-assistant:refund.issue[0]");
    expect(rules).toContain("owner-assistant:refund.issue[1]");
    expect(rules).toContain("owner-assistant.rule-of-two");
    expect(new Set(rules).size).toBe(rules.length);
  });

  it("passes matching expectations and names each mismatch", () => {
    const report = runPolicyTests(
      [
        suite([
          { name: "small", tool: "issue_refund", args: refund(40), expect: { decision: "allow" } },
          {
            name: "large",
            tool: "issue_refund",
            args: refund(250),
            expect: { decision: "require_approval", requirement: "owner", approvers: 1 },
          },
        ]),
      ],
      policy,
      catalog,
    );
    expect(report.passed).toBe(1);
    expect(report.failures.map((f) => f.problem)).toEqual([
      "expected requirement owner, got manager",
      "expected 1 approvers, got 2",
    ]);
  });

  it("counts a rule's condition both ways and the rule deciding, only where the call reached the rules", () => {
    const cover = (amounts: number[]) => {
      const r = runPolicyTests(
        [
          suite(
            amounts.map((a) => ({
              name: String(a),
              tool: "issue_refund",
              args: refund(a),
              expect: { decision: "allow" as const },
            })),
          ),
        ],
        policy,
        catalog,
      );
      return r.coverage.find((c) => c.rule === "owner-assistant:refund.issue[0]");
    };
    expect(cover([40])).toEqual({
      rule: "owner-assistant:refund.issue[0]",
      decided: false,
      held: false,
      failed: true,
    });
    expect(cover([6000])).toEqual({
      rule: "owner-assistant:refund.issue[0]",
      decided: true,
      held: true,
      failed: false,
    });
    // An amount the tool's schema rejects is decided before the rules: it covers nothing.
    expect(cover([-1])).toEqual({
      rule: "owner-assistant:refund.issue[0]",
      decided: false,
      held: false,
      failed: false,
    });
  });

  it("checks the catalog the grant shows", () => {
    const report = runPolicyTests(
      [
        suite([], {
          catalog: {
            callable: ["run_shell"],
            absent: ["issue_refund"],
            requiresApproval: ["delete_email"],
          },
        }),
      ],
      policy,
      catalog,
    );
    expect(report.failures.map((f) => f.problem)).toEqual([
      "expected tool run_shell callable, got absent",
      "expected tool issue_refund absent, got callable",
    ]);
  });

  it("a grant that cannot be composed fails the suite", () => {
    const report = runPolicyTests(
      [{ ...suite([]), grant: { profile: "legacy-integration" } }],
      policy,
      catalog,
    );
    expect(report.failures[0]?.problem).toMatch(/SOURCE_SUSPENDED/);
  });
});

describe("coverageReaches compares exactly", () => {
  it("no rounding lets a shortfall pass", () => {
    expect(coverageReaches(1999, 2000, "100")).toBe(false);
    expect(coverageReaches(2000, 2000, "100")).toBe(true);
    expect(coverageReaches(2, 3, "66.666")).toBe(true);
    expect(coverageReaches(2, 3, "66.667")).toBe(false);
    expect(coverageReaches(7, 8, "87.5")).toBe(true);
    expect(coverageReaches(0, 0, "100")).toBe(true);
    expect(() => coverageReaches(1, 1, "abc")).toThrow(RangeError);
  });
});
