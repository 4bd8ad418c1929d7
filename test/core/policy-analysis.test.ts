import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../src/core/index.js";
import {
  analyzePolicy,
  atOrAbove,
  type ApproverDirectory,
  type Finding,
} from "../../src/core/policy-analysis.js";
import { parseDocumentText } from "../../src/load/documents.js";
import { demoPair } from "../support/demo.js";

const NOW = 1_767_225_600;
const { catalog, policy: demo } = demoPair();

/** A policy over the demo catalog from YAML lines: one profile `p` of the sources given. */
const policyOf = (...lines: string[]) =>
  buildPolicy(parseDocumentText(lines.join("\n"), "p.yaml"), catalog, "p.yaml");
const analyze = (policy = demo, approvers?: ApproverDirectory) =>
  analyzePolicy(policy, catalog, { now: NOW, ...(approvers ? { approvers } : {}) });
const kinds = (findings: readonly Finding[]) => findings.map((f) => `${f.kind} ${f.subject}`);

const refundRules = (...rules: string[]) =>
  policyOf(
    "version: t",
    "sources:",
    "  s:",
    "    allow: [refund.issue]",
    "    rules:",
    "      refund.issue:",
    ...rules.map((r) => `        - ${r}`),
    "profiles:",
    "  p: { sources: [s] }",
  );
const over = (n: number, then: string) =>
  `{ when: { required: [amount], properties: { amount: { exclusiveMinimum: ${n} } } }, ${then} }`;
const DENY = "then: deny, reason: too much";
const OWNER = "then: require_approval, requirement: owner";

describe("analyzePolicy()", () => {
  it("finds no error in the demo policy", () => {
    const findings = analyze();
    expect(findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(kinds(findings)).toEqual([
      "never-callable profile receptionist",
      "profile-not-composable profile legacy-integration",
    ]);
  });

  it("a rule shadowed by an earlier, weaker deny: an error with a call the deny decides", () => {
    const findings = analyze(refundRules(over(100, DENY), over(500, OWNER)));
    expect(kinds(findings)).toEqual(["shadowed-rule s:refund.issue[1]"]);
    const [f] = findings;
    expect(f?.severity).toBe("error");
    expect(f?.message).toContain("decided first by s:refund.issue[0]");
    expect(f?.counterexample).toMatchObject({
      profile: "p",
      tool: "issue_refund",
      arguments: { amount: 501 },
      verdict: { decision: "deny", reason: "RULE_DENY", rule: "s:refund.issue[0]" },
    });
  });

  it("a deny written after an approval still decides first: the approval can be shadowed by it", () => {
    const findings = analyze(refundRules(over(500, OWNER), over(100, DENY)));
    expect(kinds(findings)).toEqual(["shadowed-rule s:refund.issue[0]"]);
  });

  it("an approval rule behind a weaker approval rule is shadowed", () => {
    const findings = analyze(
      refundRules(over(100, OWNER), over(500, "then: require_approval, requirement: manager")),
    );
    expect(kinds(findings)).toEqual(["shadowed-rule s:refund.issue[1]"]);
  });

  it("a rule that decides only what the approval list decides anyway is redundant", () => {
    const policy = policyOf(
      "version: t",
      "sources:",
      "  s:",
      "    approval: [refund.issue]",
      "    rules:",
      "      refund.issue:",
      `        - ${over(100, OWNER)}`,
      "profiles:",
      "  p: { sources: [s] }",
    );
    const findings = analyze(policy);
    expect(kinds(findings)).toEqual(["redundant-rule s:refund.issue[0]"]);
    expect(findings[0]?.counterexample?.verdict).toMatchObject({
      decision: "require_approval",
      requirement: "owner",
    });
  });

  it("a condition every sampled call meets is always true, with a call", () => {
    const findings = analyze(refundRules(`{ when: { required: [order_id] }, ${OWNER} }`));
    expect(kinds(findings)).toEqual(["condition-always-true s:refund.issue[0]"]);
    expect(findings[0]?.severity).toBe("warning");
    expect(findings[0]?.counterexample?.verdict.decision).toBe("require_approval");
  });

  it("a condition no sampled call meets is never true (a warning: sampling proves nothing)", () => {
    const findings = analyze(
      refundRules(
        `{ when: { required: [note], properties: { note: { pattern: "\\\\bzz9" } } }, ${DENY} }`,
      ),
    );
    expect(kinds(findings)).toEqual(["condition-never-true s:refund.issue[0]"]);
    expect(findings[0]?.severity).toBe("warning");
  });

  it("an action a profile's source allows but a global deny removes is never callable", () => {
    const policy = policyOf(
      "version: t",
      "sources:",
      "  g: { global: true, deny: [refund.issue] }",
      "  s: { allow: [refund.issue, invoice.read] }",
      "profiles:",
      "  p: { sources: [s] }",
    );
    const findings = analyze(policy);
    expect(kinds(findings)).toEqual(["never-callable profile p"]);
    expect(findings[0]).toMatchObject({
      severity: "warning",
      counterexample: { tool: "issue_refund", verdict: { reason: "EXPLICIT_DENY" } },
    });
  });

  describe("approval requirements and the approvers who can meet them", () => {
    const policy = (requirement: string) =>
      policyOf(
        "version: t",
        "requirements: { legal: { approvers: 2 }, lead: { approvers: 2, owner: true } }",
        "sources:",
        "  s:",
        "    allow: [refund.issue]",
        "    rules:",
        `      refund.issue: [${over(100, `then: require_approval, requirement: ${requirement}`)}]`,
        "profiles:",
        "  p: { sources: [s] }",
      );
    const dir = (...holders: [string, `approve:${string}`[]][]): ApproverDirectory => ({
      approvers: new Map(holders.map(([principal, roles]) => [principal, { roles }])),
      teams: new Map(),
    });

    it("two approvers needed, one holder: unmeetable, with a call held for it", () => {
      const findings = analyze(policy("legal"), dir(["bea", ["approve:legal"]]));
      expect(kinds(findings)).toEqual(["unmeetable-approval requirement legal"]);
      expect(findings[0]?.severity).toBe("error");
      expect(findings[0]?.message).toContain("1 principal(s) hold approve:legal");
      expect(findings[0]?.counterexample?.verdict).toMatchObject({
        decision: "require_approval",
        requirement: "legal",
      });
    });

    it("a role nobody holds is unmeetable", () => {
      const findings = analyze(policy("legal"), dir(["bea", ["approve:manager"]]));
      expect(findings[0]?.message).toContain("nobody holds the role approve:legal");
    });

    it("two holders meet it; the owner counts where the policy says so", () => {
      expect(
        analyze(policy("legal"), dir(["bea", ["approve:legal"]], ["cy", ["approve:legal"]])),
      ).toEqual([]);
      expect(analyze(policy("lead"), dir(["bea", ["approve:lead"]]))).toEqual([]);
    });

    it("without a directory nothing is said about approvers", () => {
      expect(analyze(policy("legal"))).toEqual([]);
    });
  });

  it("is deterministic", () => {
    expect(analyze()).toEqual(analyze());
  });
});

describe("atOrAbove()", () => {
  it("orders info < warning < error", () => {
    expect(atOrAbove("warning", "warning")).toBe(true);
    expect(atOrAbove("info", "warning")).toBe(false);
    expect(atOrAbove("error", "info")).toBe(true);
  });
});
