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

describe("runPolicyTests: delegated grants", () => {
  const { catalog, policy } = demoPair();
  const delegated = (
    delegation: NonNullable<TestSuite["grant"]["delegate"]>,
    cases: readonly TestCase[] = [],
    extra: Partial<TestSuite> = {},
  ): TestSuite => ({
    suite: "d",
    now: NOW,
    grant: { profile: "owner-assistant", delegate: delegation },
    cases,
    ...extra,
  });

  it("decides the cases under the child grant, tool names standing for their actions", () => {
    const report = runPolicyTests(
      [
        delegated(
          {
            subject: "agent:child",
            allowed: ["web_search", "email.send"],
            caveats: { send_email: { binds: { to: "ana@example.com" } } },
          },
          [
            {
              name: "search",
              tool: "web_search",
              args: { query: "x" },
              expect: { decision: "allow" },
            },
            {
              name: "mail elsewhere",
              tool: "send_email",
              args: { to: "bob@example.com", subject: "s", body: "b" },
              expect: { decision: "allow" },
            },
            {
              name: "refund",
              tool: "issue_refund",
              args: refund(40),
              expect: { decision: "allow" },
            },
          ],
          { catalog: { absent: ["issue_refund"], callable: ["read_email"] } },
        ),
      ],
      policy,
      catalog,
    );
    expect(report.passed).toBe(1);
    expect(report.failures).toEqual([
      { suite: "d", name: "catalog", problem: "expected tool read_email callable, got absent" },
      {
        suite: "d",
        name: "mail elsewhere",
        problem: "expected decision allow, got deny (CONSTRAINT_VIOLATION)",
      },
      { suite: "d", name: "refund", problem: "expected decision allow, got deny (NOT_GRANTED)" },
    ]);
  });

  it.each([
    [{ subject: "c", allowed: ["issue_refund"] }, "ACTION_NOT_DELEGABLE"],
    [{ subject: "c", allowed: ["web_search"], limits: { maxCalls: 301 } }, "LIMIT_WIDENS"],
    [{ subject: "c", allowed: ["web_search"], ttlSeconds: 8000 }, "EXPIRY_WIDENS"],
    [{ subject: "c", allowed: ["delete_email"] }, "ACTION_NOT_IN_PARENT"],
  ])("a refused delegation passes when expected: %j is %s", (delegation, code) => {
    const pass = runPolicyTests(
      [delegated(delegation, undefined, { expect: { refused: code } })],
      policy,
      catalog,
    );
    expect(pass.failures).toEqual([]);
    expect([pass.cases, pass.passed]).toEqual([1, 1]);
    const wrong = runPolicyTests(
      [delegated(delegation, undefined, { expect: { refused: "DEPTH_EXCEEDED" } })],
      policy,
      catalog,
    );
    expect(wrong.failures[0]?.problem).toMatch(
      new RegExp(`^expected the grant refused with DEPTH_EXCEEDED, got ${code}: `),
    );
  });

  it("an expected refusal that is granted fails; a refusal nobody expected fails the suite", () => {
    const granted = runPolicyTests(
      [
        delegated({ subject: "c", allowed: ["web_search"] }, undefined, {
          expect: { refused: "LIMIT_WIDENS" },
        }),
      ],
      policy,
      catalog,
    );
    expect(granted.failures).toEqual([
      {
        suite: "d",
        name: "grant",
        problem: "expected the grant refused with LIMIT_WIDENS, got it granted",
      },
    ]);
    const refused = runPolicyTests(
      [
        delegated({ subject: "c", allowed: ["issue_refund"] }, [
          { name: "n", tool: "web_search", expect: { decision: "allow" } },
        ]),
      ],
      policy,
      catalog,
    );
    expect(refused.failures[0]?.problem).toMatch(
      /^the grant cannot be made \(ACTION_NOT_DELEGABLE: /,
    );
    expect([refused.cases, refused.passed]).toEqual([1, 0]);
  });

  it("a caveat schema that does not compile refuses the grant, naming the caveat", () => {
    const report = runPolicyTests(
      [
        delegated(
          {
            subject: "c",
            allowed: ["web_search"],
            caveats: { web_search: { constraints: [{ type: "nope" }] } },
          },
          [],
        ),
      ],
      policy,
      catalog,
    );
    expect(report.failures[0]?.problem).toMatch(
      /INVALID_REQUEST: grant.delegate.caveats\["web_search"\].constraints\[0\] is not a usable JSON Schema/,
    );
  });

  it("rules the child inherits are covered by its cases", () => {
    const report = runPolicyTests(
      [
        delegated({ subject: "c", allowed: ["fetch_url"] }, [
          {
            name: "two",
            tool: "fetch_url",
            args: { url: "https://example.org" },
            run: { seen: ["untrusted", "private"] },
            expect: { decision: "require_approval", rule: "owner-assistant.rule-of-two" },
          },
        ]),
      ],
      policy,
      catalog,
    );
    expect(report.failures).toEqual([]);
    expect(report.coverage.find((c) => c.rule === "owner-assistant.rule-of-two")).toMatchObject({
      decided: true,
      held: true,
    });
  });
});

describe("runPolicyTests: the matrix form", () => {
  const { catalog, policy } = demoPair();
  const matrix = (
    cases: readonly TestCase[],
    profiles = ["owner-assistant", "receptionist"],
  ): TestSuite => ({
    suite: "m",
    now: NOW,
    grant: { profiles },
    cases,
  });

  it("decides each case under each profile, naming a failing cell case [profile]", () => {
    const report = runPolicyTests(
      [
        matrix([
          {
            name: "refund",
            tool: "issue_refund",
            args: refund(40),
            expect: {
              "owner-assistant": { decision: "allow" },
              receptionist: { decision: "allow" },
            },
          },
          {
            name: "shell",
            tool: "run_shell",
            args: { command: "ls" },
            expect: { decision: "deny", reason: "EXPLICIT_DENY" },
          },
        ]),
      ],
      policy,
      catalog,
    );
    expect([report.cases, report.passed]).toEqual([4, 3]);
    expect(report.failures).toEqual([
      {
        suite: "m",
        name: "refund [receptionist]",
        problem: "expected decision allow, got deny (NOT_GRANTED)",
      },
    ]);
  });

  it("a profile that cannot be composed fails its cells only", () => {
    const report = runPolicyTests(
      [
        matrix(
          [
            {
              name: "search",
              tool: "web_search",
              args: { query: "x" },
              expect: { decision: "allow" },
            },
          ],
          ["owner-assistant", "legacy-integration"],
        ),
      ],
      policy,
      catalog,
    );
    expect([report.cases, report.passed]).toEqual([2, 1]);
    expect(report.failures[0]?.name).toBe("grant [legacy-integration]");
    expect(report.failures[0]?.problem).toMatch(/SOURCE_SUSPENDED/);
  });

  it("a cell with no expectation for its profile fails", () => {
    const report = runPolicyTests(
      [
        matrix([
          {
            name: "search",
            tool: "web_search",
            args: { query: "x" },
            expect: { "owner-assistant": { decision: "allow" } },
          },
        ]),
      ],
      policy,
      catalog,
    );
    expect(report.failures).toEqual([
      {
        suite: "m",
        name: "search [receptionist]",
        problem: "no expectation for profile receptionist",
      },
    ]);
  });
});

describe("runPolicyTests: multi-call scenarios", () => {
  const { catalog, policy } = demoPair();
  const scenario: TestSuite = {
    suite: "sc",
    now: NOW,
    grant: { profile: "owner-assistant" },
    cases: [
      {
        name: "two calls",
        calls: [
          { tool: "web_search", args: { query: "a" }, expect: { decision: "allow" } },
          { tool: "web_search", args: { query: "b" }, expect: { decision: "allow" } },
        ],
      },
    ],
  };

  it("a scenario nobody ran through the stateful pipeline fails, saying so", () => {
    const report = runPolicyTests([scenario], policy, catalog);
    expect(report.failures).toEqual([
      {
        suite: "sc",
        name: "two calls",
        problem: "a multi-call scenario needs the stateful pipeline; none ran it",
      },
    ]);
    expect([report.cases, report.passed]).toEqual([1, 0]);
  });

  it("a scenario that could not be run fails with the reason", () => {
    const report = runPolicyTests([scenario], policy, catalog, () => ({
      kind: "failed",
      message: "the store is gone",
    }));
    expect(report.failures[0]?.problem).toBe("the scenario could not be run: the store is gone");
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
