import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../src/core/index.js";
import { diffPolicies } from "../../src/core/policy-diff.js";
import { parseDocumentText } from "../../src/load/documents.js";
import { demoPair } from "../support/demo.js";

const NOW = 1_767_225_600;
const { catalog, policy } = demoPair();
const TEXT = readFileSync(new URL("../../fixtures/policy.yaml", import.meta.url), "utf8");

/** The demo policy with one text replaced (which must be there). */
function edited(from: string, to: string) {
  expect(TEXT).toContain(from);
  const text = TEXT.replace(from, to);
  return { policy: buildPolicy(parseDocumentText(text, "p.yaml"), catalog, "p.yaml"), catalog };
}
const diff = (newer: ReturnType<typeof edited>) => diffPolicies({ policy, catalog }, newer, NOW);
const changed = (d: ReturnType<typeof diff>) =>
  d.actions.filter((a) => a.change !== "equal").map((a) => `${a.profile} ${a.action} ${a.change}`);

describe("diffPolicies()", () => {
  it("the demo against itself: every profile and action equal, no tool changes", () => {
    const d = diffPolicies({ policy, catalog }, { policy, catalog }, NOW);
    expect(d.equal).toBe(true);
    expect(d.actions.length).toBeGreaterThan(20);
    expect(changed(d)).toEqual([]);
    expect(d.catalogs).toEqual([]);
    expect(d.profiles).toEqual([]);
  });

  it("limits: a call budget raised is more permissive, a lifetime cut less; decisions unchanged", () => {
    const d = diff(
      edited(
        "      maxCalls: 300\n      maxCallsPerAction: 60\n      maxDelegationDepth: 2\n      maxRuntimeSeconds: 7200",
        "      maxCalls: 500\n      maxCallsPerAction: 60\n      maxDelegationDepth: 2\n      maxRuntimeSeconds: 3600",
      ),
    );
    expect(d.equal).toBe(false);
    expect(changed(d)).toEqual([]);
    expect(d.limits.filter((l) => l.profile === "owner-assistant")).toEqual([
      {
        profile: "owner-assistant",
        limit: "maxCalls",
        old: 300,
        new: 500,
        change: "more permissive",
      },
      {
        profile: "owner-assistant",
        limit: "lifetimeSeconds",
        old: 7200,
        new: 3600,
        change: "less permissive",
      },
    ]);
    expect(diffPolicies({ policy, catalog }, { policy, catalog }, NOW).limits).toEqual([]);
  });

  it("a raised refund threshold: exactly refund.issue more permissive, with the call at the old boundary", () => {
    const d = diff(
      edited("amount: { exclusiveMinimum: 100 }", "amount: { exclusiveMinimum: 200 }"),
    );
    expect(d.equal).toBe(false);
    expect(changed(d)).toEqual([
      "owner-assistant refund.issue more permissive",
      "owner-assistant-dryrun refund.issue more permissive",
    ]);
    expect(d.actions.find((a) => a.change !== "equal")?.counterexample).toMatchObject({
      tool: "issue_refund",
      arguments: { amount: 101 },
      old: { decision: "require_approval", requirement: "manager" },
      new: { decision: "allow" },
    });
    expect(d.catalogs).toEqual([]);
  });

  it("a lowered threshold is less permissive", () => {
    const d = diff(edited("amount: { exclusiveMinimum: 100 }", "amount: { exclusiveMinimum: 30 }"));
    expect(changed(d)).toContain("owner-assistant refund.issue less permissive");
  });

  it("another requirement for the same calls is changed, not more or less", () => {
    const d = diff(
      edited(
        "then: require_approval\n          requirement: manager",
        "then: require_approval\n          requirement: owner",
      ),
    );
    expect(changed(d)).toContain("owner-assistant refund.issue changed");
    expect(d.actions.find((a) => a.change === "changed")?.counterexample).toMatchObject({
      old: { requirement: "manager" },
      new: { requirement: "owner" },
    });
  });

  it("an action moved from allow to the approval list: less permissive, and its tool now requires approval", () => {
    const d = diff(moved());
    expect(changed(d)).toContain("owner-assistant web.search less permissive");
    expect(d.catalogs.find((c) => c.profile === "owner-assistant")?.changed).toEqual([
      { tool: "web_search", from: "callable", to: "requires_approval" },
    ]);
  });

  it("an action no longer allowed: its tool is lost from the profile's catalog", () => {
    const d = diff(edited("      - web.search\n", ""));
    expect(changed(d)).toContain("owner-assistant web.search less permissive");
    expect(d.catalogs.find((c) => c.profile === "owner-assistant")?.lost).toEqual(["web_search"]);
  });

  it("a profile removed is reported with every action it held as less permissive", () => {
    const d = diff(
      edited(
        "  email-drafter:\n    description: A sub-agent",
        "  drafter-2:\n    description: A sub-agent",
      ),
    );
    expect(d.profiles).toEqual(
      expect.arrayContaining([
        { profile: "email-drafter", old: "live", new: "absent" },
        { profile: "drafter-2", old: "absent", new: "live" },
      ]),
    );
    expect(changed(d)).toContain("email-drafter email.send less permissive");
  });
});

function moved() {
  const text = TEXT.replace("      - web.search\n", "").replace(
    "    approval:\n      - email.delete",
    "    approval:\n      - web.search\n      - email.delete",
  );
  return { policy: buildPolicy(parseDocumentText(text, "p.yaml"), catalog, "p.yaml"), catalog };
}
