import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES } from "../support/charter-server.js";
import { runCapture } from "../support/cli.js";

// `charter test` against the demo's own suites (fixtures/tests): what `npm test` runs to keep the
// demo policy covered, and what an operator sees when a change to the policy breaks a case.

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "charter-test-cli-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const demo = (policy = join(FIXTURES, "policy.yaml")) => [
  "--catalog",
  join(FIXTURES, "catalog.yaml"),
  "--policy",
  policy,
];
const TESTS = join(FIXTURES, "tests");
const cli = (...args: string[]) => runCapture(["test", ...args]);

describe("charter test", () => {
  it("the demo's suites pass with every rule of the demo policy covered (threshold 100, exact)", async () => {
    const r = await cli(...demo(), "--threshold", "100", TESTS);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/rule coverage 100 % \((\d+) of \1 outcomes\), threshold 100 % met/);
    expect(r.out).toMatch(/: \d+ passed, 0 failed/);
  });

  it("a copy of the demo policy with one threshold changed fails, naming the case", async () => {
    const policy = join(dir, "lowered.yaml");
    const text = readFileSync(join(FIXTURES, "policy.yaml"), "utf8");
    const lowered = text.replace(
      "amount: { exclusiveMinimum: 100 }",
      "amount: { exclusiveMinimum: 30 }",
    );
    expect(lowered).not.toBe(text);
    writeFileSync(policy, lowered);
    const r = await cli(...demo(policy), TESTS);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      "FAIL owner-assistant › a refund of 40 is allowed: expected decision allow, got require_approval",
    );
  });

  it("coverage below the threshold exits 2; --json gives the same figures", async () => {
    const one = join(dir, "one.yaml");
    writeFileSync(
      one,
      [
        "suite: one",
        "grant: { profile: owner-assistant }",
        "cases:",
        "  - name: small refund",
        "    tool: issue_refund",
        "    args: { order_id: ord_A1B2C3, amount: 40, currency: EUR, reason: damaged }",
        "    expect: { decision: allow }",
      ].join("\n"),
    );
    const r = await cli(...demo(), "--threshold", "50", one);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/threshold 50 % NOT met/);
    const j = await cli(...demo(), "--threshold", "50", "--json", one);
    expect(j.code).toBe(2);
    const report = JSON.parse(j.out) as {
      passed: number;
      coverage: {
        covered: number;
        total: number;
        reached: boolean;
        rules: { rule: string; failed: boolean }[];
      };
    };
    expect(report.passed).toBe(1);
    expect(report.coverage.reached).toBe(false);
    expect(report.coverage.covered).toBeLessThan(report.coverage.total);
    expect(
      report.coverage.rules.find((c) => c.rule === "owner-assistant:refund.issue[1]")?.failed,
    ).toBe(true);
  });

  it("a test file outside the format exits 78 naming the file and the place; nothing runs", async () => {
    const bad = join(dir, "bad.yaml");
    writeFileSync(
      bad,
      "suite: x\ngrant: { profile: owner-assistant }\ncases:\n  - name: n\n    tool: t\n    expect: { decision: maybe }\n",
    );
    const r = await cli(...demo(), bad);
    expect(r.code).toBe(78);
    expect(r.err).toContain(
      `${bad}: /cases/0/expect/decision: must be equal to one of the allowed values`,
    );
    expect(r.out).toBe("");
  });

  it("a failing delegated case and a failing matrix cell are each named", async () => {
    const policy = join(dir, "widened.yaml");
    const text = readFileSync(join(FIXTURES, "policy.yaml"), "utf8");
    // Visitors may now learn email addresses too: the receptionist's cell of the matrix fails.
    const widened = text.replace(
      "fields: { items: { enum: [name, company] } }",
      "fields: { items: { enum: [name, company, email] } }",
    );
    expect(widened).not.toBe(text);
    writeFileSync(policy, widened);
    const r = await cli(...demo(policy), TESTS);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      "FAIL profiles-matrix › looking up an email address [receptionist]: expected decision deny, got allow",
    );
    const suite = join(dir, "delegated.yaml");
    writeFileSync(
      suite,
      readFileSync(join(TESTS, "delegated-researcher.yaml"), "utf8").replace(
        "send_email: { binds: { to: ana@example.com } }",
        "send_email: { binds: { to: bob@example.com } }",
      ),
    );
    const d = await cli(...demo(), suite);
    expect(d.code).toBe(1);
    expect(d.out).toContain(
      "FAIL delegated-researcher › the researcher reports to Ana: expected decision allow, got deny (CONSTRAINT_VIOLATION)",
    );
  });

  it("a scenario's calls share one state: a failing call is named by its place", async () => {
    const suite = join(dir, "budget.yaml");
    const text = readFileSync(join(TESTS, "scenarios-budget.yaml"), "utf8");
    const widened = text.replace("maxCallsPerAction: 2", "maxCallsPerAction: 3");
    expect(widened).not.toBe(text);
    writeFileSync(suite, widened);
    const r = await cli(...demo(), suite);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      "FAIL scenarios-budget › the budget runs out on the third search: call 3: expected decision deny, got allow",
    );
    // Nothing but the third call differs: the step retried still answers its held allow.
    expect(r.out).not.toContain("call 4");
    expect(r.out).toMatch(/1 suites, 1 cases: 0 passed, 1 failed/);
  });

  it("rule coverage counts the calls of scenarios", async () => {
    const r = await cli(...demo(), "--json", join(TESTS, "scenarios.yaml"));
    expect(r.code).toBe(0);
    const rules = (JSON.parse(r.out) as { coverage: { rules: { rule: string }[] } }).coverage.rules;
    expect(rules.find((c) => c.rule === "owner-assistant.rule-of-two")).toEqual({
      rule: "owner-assistant.rule-of-two",
      decided: true,
      held: true,
      failed: true,
    });
    expect(rules.find((c) => c.rule === "owner-assistant:deal.update[0]")).toEqual({
      rule: "owner-assistant:deal.update[0]",
      decided: false,
      held: false,
      failed: false,
    });
  });

  it("a scenario in the matrix form runs on a state of its own per profile", async () => {
    const suite = join(dir, "matrix-scenario.yaml");
    writeFileSync(
      suite,
      [
        "suite: ms",
        "grant: { profiles: [owner-assistant, receptionist] }",
        "cases:",
        "  - name: mail then fetch",
        "    calls:",
        "      - tool: read_email",
        "        args: { message_id: msg_ABCDEFGH }",
        "        expect: { owner-assistant: { decision: allow }, receptionist: { decision: allow } }",
        "      - tool: fetch_url",
        '        args: { url: "https://example.org/page" }',
        "        expect: { decision: require_approval }",
      ].join("\n"),
    );
    const r = await cli(...demo(), suite);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      "FAIL ms › mail then fetch [receptionist]: call 1: expected decision allow, got deny (NOT_GRANTED)",
    );
    expect(r.out).toContain(
      "FAIL ms › mail then fetch [receptionist]: call 2: expected decision require_approval, got deny (NOT_GRANTED)",
    );
    expect(r.out).not.toContain("[owner-assistant]");
  });

  it("approvals in a scenario: a held refund allowed once two managers approved it; an approval with nothing held fails the case", async () => {
    // The demo's scenario runs in the first test; here its text without the second approver.
    const text = readFileSync(join(TESTS, "scenarios.yaml"), "utf8");
    const one = join(dir, "one-manager.yaml");
    const second = "        approvedBy: [manager:cleo]\n";
    expect(text).toContain(second);
    writeFileSync(one, text.replace(second, ""));
    const r = await cli(...demo(), one);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      "FAIL scenarios › a refund of 250 is made once two managers have approved it: call 3: expected decision allow, got require_approval",
    );
    const orphan = join(dir, "orphan-approval.yaml");
    writeFileSync(
      orphan,
      [
        "suite: orphan",
        "grant: { profile: owner-assistant }",
        "cases:",
        "  - name: approves nothing",
        "    calls:",
        "      - tool: web_search",
        "        args: { query: charter }",
        "        approvedBy: [manager:ben]",
        "        expect: { decision: allow }",
      ].join("\n"),
    );
    const o = await cli(...demo(), orphan);
    expect(o.code).toBe(1);
    expect(o.out).toContain("call 1: approvedBy, but no earlier call of the scenario was held");
  });

  it.each([
    ["profiles: owner-assistant", "/grant/profiles: must be array"],
    [
      "profiles: [owner-assistant]\n  profile: receptionist",
      "/grant: must match exactly one schema in oneOf",
    ],
    [
      "profile: owner-assistant\n  delegate: { allowed: [web_search] }",
      "/grant/delegate: must have required property 'subject'",
    ],
    [
      "profile: owner-assistant\n  delegate: { subject: a, allowed: [web_search], scope: all }",
      "/grant/delegate: must NOT have additional properties",
    ],
    [
      "profile: owner-assistant\ncases:\n  - name: n\n    tool: web_search\n    expect: { receptionist: { decision: deny } }",
      "/cases/0/expect: an expectation per profile needs grant.profiles",
    ],
    [
      "profiles: [owner-assistant, receptionist]\ncases:\n  - name: n\n    tool: web_search\n    expect: { receptionist: { decision: deny }, nobody: { decision: deny } }",
      '/cases/0/expect/nobody: "nobody" is not one of grant.profiles',
    ],
    [
      "profile: owner-assistant\nexpect: { refused: LIMIT_WIDENS }\ncases: []",
      "/cases: a suite whose grant must be refused (expect.refused) has no cases",
    ],
    [
      "profile: owner-assistant\ncases:\n  - name: n\n    calls:\n      - { tool: web_search, run: 7, expect: { decision: allow } }",
      "/cases/0/calls/0/run: must be string",
    ],
    [
      "profile: owner-assistant\ncases:\n  - name: n\n    calls: []",
      "/cases/0/calls: must NOT have fewer than 1 items",
    ],
  ])("a suite with a bad grant field exits 78 naming it: %s", async (grant, message) => {
    const bad = join(dir, "bad-grant.yaml");
    writeFileSync(bad, `suite: x\ngrant:\n  ${grant}\n`);
    const r = await cli(...demo(), bad);
    expect(r.code).toBe(78);
    expect(r.err).toContain(`${bad}: ${message}`);
    expect(r.out).toBe("");
  });

  it.each([
    [[TESTS, "--threshold", "101"], /--threshold is at most 100/],
    [[TESTS, "--threshold", "ninety"], /--threshold must be a percentage/],
    [[], /name the test files or directories/],
  ])("usage errors exit 64: %j", async (args, message) => {
    const r = await cli(...demo(), ...args);
    expect(r.code).toBe(64);
    expect(r.err).toMatch(message);
  });

  it("a missing path exits 78", async () => {
    const r = await cli(...demo(), join(dir, "nowhere"));
    expect(r.code).toBe(78);
    expect(r.err).toMatch(/nowhere: cannot read: file not found/);
  });
});
