import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES } from "../support/charter-server.js";
import { runCapture } from "../support/cli.js";

// `charter analyze` on the demo and on a test policy with a shadowed rule and an approval
// requirement nobody can meet planted in it: what an operator runs before changing a policy.

let dir: string;
let planted: string;
let approvers: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "charter-analyze-cli-"));
  planted = join(dir, "planted.yaml");
  writeFileSync(
    planted,
    [
      "version: planted-1",
      "requirements:",
      "  legal: { approvers: 2 }",
      "sources:",
      "  payments:",
      "    allow: [refund.issue, email.send]",
      "    rules:",
      "      refund.issue:",
      "        - when: { required: [amount], properties: { amount: { minimum: 100 } } }",
      "          then: deny",
      "          reason: Refunds of 100 or more go to the finance team.",
      "        # Planted: never decides, the deny above takes every call it holds for.",
      "        - when: { required: [amount], properties: { amount: { exclusiveMinimum: 500 } } }",
      "          then: require_approval",
      "          requirement: owner",
      "      email.send:",
      "        - when: { required: [to], properties: { to: { not: { pattern: '@example\\.com$' } } } }",
      "          then: require_approval",
      "          requirement: legal",
      "profiles:",
      "  payments: { sources: [payments] }",
    ].join("\n"),
  );
  approvers = join(dir, "approvers.yaml");
  // Planted: legal needs two approvers and one principal holds the role.
  writeFileSync(
    approvers,
    "approvers:\n  person:lee: [approve:legal]\n  person:mo: [approve:manager]\n",
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pair = (policy = join(FIXTURES, "policy.yaml")) => [
  "--catalog",
  join(FIXTURES, "catalog.yaml"),
  "--policy",
  policy,
];
const cli = (...args: string[]) => runCapture(["analyze", ...args]);

interface Report {
  findings: {
    kind: string;
    severity: string;
    subject: string;
    message: string;
    counterexample?: {
      profile: string;
      tool: string;
      arguments: Record<string, unknown>;
      verdict: { decision: string; reason?: string; requirement?: string; rule?: string };
    };
  }[];
}

describe("charter analyze", () => {
  it("finds the planted shadowed rule and unmeetable requirement, each with a counterexample call", async () => {
    const r = await cli(...pair(planted), "--approvers", approvers, "--json");
    expect(r.err).toBe("");
    expect(r.code).toBe(1);
    const { findings } = JSON.parse(r.out) as Report;
    const shadowed = findings.find((f) => f.kind === "shadowed-rule");
    expect(shadowed).toMatchObject({
      severity: "error",
      subject: "payments:refund.issue[1]",
      counterexample: {
        profile: "payments",
        tool: "issue_refund",
        arguments: { amount: 501 },
        verdict: { decision: "deny", reason: "RULE_DENY", rule: "payments:refund.issue[0]" },
      },
    });
    const unmeetable = findings.find((f) => f.kind === "unmeetable-approval");
    expect(unmeetable).toMatchObject({
      severity: "error",
      subject: "requirement legal",
      counterexample: {
        profile: "payments",
        tool: "send_email",
        verdict: { decision: "require_approval", requirement: "legal" },
      },
    });
    expect(findings.filter((f) => f.severity === "error")).toHaveLength(2);
  });

  it("prints the findings as a table, each counterexample under its finding", async () => {
    const r = await cli(...pair(planted), "--approvers", approvers);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /^error +shadowed-rule +payments:refund\.issue\[1\]: it can never decide/m,
    );
    expect(r.out).toMatch(
      /e\.g\. profile payments: issue_refund \{.*"amount":501.*\} -> deny \(RULE_DENY, rule payments:refund\.issue\[0\]\)/,
    );
    expect(r.out).toMatch(/2 error, 0 warning, 0 info; 2 at or above error$/m);
  });

  it("the demo has no error findings: exit 0; --fail-on info counts its info findings", async () => {
    const r = await cli("--config", join(FIXTURES, "charter.yaml"));
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/ 0 error, 0 warning, 2 info; 0 at or above error$/m);
    const info = await cli("--config", join(FIXTURES, "charter.yaml"), "--fail-on", "info");
    expect(info.code).toBe(1);
  });

  it("usage errors exit 64", async () => {
    const r = await cli(...pair(), "--fail-on", "fatal");
    expect(r.code).toBe(64);
    expect(r.err).toMatch(/--fail-on must be one of info, warning, error/);
  });

  it("a policy or approver directory that does not load exits 78 naming the file", async () => {
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "version: x\nsources: {}\nprofiles: { p: { sources: [nope] } }\n");
    const r = await cli(...pair(bad));
    expect(r.code).toBe(78);
    expect(r.err).toContain(bad);
    const badDir = join(dir, "dir.yaml");
    writeFileSync(badDir, "approvers: { bea: approve:legal }\n");
    const d = await cli(...pair(), "--approvers", badDir);
    expect(d.code).toBe(78);
    expect(d.err).toContain(`${badDir}: approvers.bea: an approver directory is`);
    expect(d.out).toBe("");
  });
});
