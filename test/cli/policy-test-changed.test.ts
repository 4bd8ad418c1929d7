import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES } from "../support/charter-server.js";
import { runCapture } from "../support/cli.js";

// `charter test --changed-since REF`: coverage (and --threshold) over the rules of the policy
// that are new or changed since a git ref, in a repository of its own holding the demo.

let repo: string;
const git = (...args: string[]) =>
  execFileSync(
    "git",
    ["-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com", ...args],
    {
      encoding: "utf8",
    },
  );
const DEMO = readFileSync(join(FIXTURES, "policy.yaml"), "utf8");
const files = () => [
  "--catalog",
  join(repo, "catalog.yaml"),
  "--policy",
  join(repo, "policy.yaml"),
];
const run = (...args: string[]) => runCapture(["test", ...files(), ...args, join(repo, "tests")]);
const REFUND_DENY = "Refunds of 5000 or more are handled by the finance team";
const DEAL_RULE = `              stage: { enum: [closed_won, closed_lost] }
          then: require_approval
          requirement: owner
`;

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "charter-changed-"));
  cpSync(join(FIXTURES, "catalog.yaml"), join(repo, "catalog.yaml"));
  cpSync(join(FIXTURES, "policy.yaml"), join(repo, "policy.yaml"));
  cpSync(join(FIXTURES, "tests"), join(repo, "tests"), { recursive: true });
  git("init", "-q");
  git("add", ".");
  git("commit", "-q", "-m", "demo");
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("charter test --changed-since", () => {
  it("with nothing changed: no rule to cover, the threshold is met", async () => {
    writeFileSync(join(repo, "policy.yaml"), DEMO);
    const r = await run("--changed-since", "HEAD", "--threshold", "100");
    expect(r.code).toBe(0);
    expect(r.out).toContain("0 rules new or changed since HEAD");
    expect(r.out).toMatch(/rule coverage 100 % \(0 of 0 outcomes\)/);
  });

  it("a rule whose text changed is the one reported, covered by the demo's cases", async () => {
    expect(DEMO).toContain(REFUND_DENY);
    writeFileSync(
      join(repo, "policy.yaml"),
      DEMO.replace(REFUND_DENY, "Refunds this large go to finance"),
    );
    const r = await run("--changed-since", "HEAD", "--threshold", "100", "--json");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as {
      changedSince: string;
      coverage: { covered: number; total: number; rules: { rule: string }[] };
    };
    expect(report.changedSince).toBe("HEAD");
    expect(report.coverage.rules.map((c) => c.rule)).toStrictEqual([
      "owner-assistant:refund.issue[0]",
    ]);
    expect(report.coverage).toMatchObject({ covered: 3, total: 3 });
  });

  it("a new rule no case exercises: coverage of the change falls below the threshold (exit 2), the whole policy's does not matter", async () => {
    expect(DEMO).toContain(DEAL_RULE);
    const added = DEMO.replace(
      DEAL_RULE,
      `${DEAL_RULE}        - when:
            required: [value]
            properties:
              value: { minimum: 1000000 }
          then: deny
          reason: Deals this large are the owner's to update.
`,
    );
    writeFileSync(join(repo, "policy.yaml"), added);
    const r = await run("--changed-since", "HEAD", "--threshold", "100");
    expect(r.code).toBe(2);
    expect(r.out).toContain("1 rules new or changed since HEAD");
    expect(r.out).toMatch(/owner-assistant:deal\.update\[1\]\s+NO/);
    // Committed, the same rule is no longer a change.
    git("commit", "-q", "-am", "deal rule");
    expect((await run("--changed-since", "HEAD", "--threshold", "100")).code).toBe(0);
  });

  it("a ref git does not know is a load error (78), and a flag-like ref a usage error (64)", async () => {
    expect((await run("--changed-since", "no-such-ref")).code).toBe(78);
    expect((await run("--changed-since", "--oops")).code).toBe(64);
  });
});
