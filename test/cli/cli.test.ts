import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES } from "../support/charter-server.js";
import { runCapture, type CliRun } from "../support/cli.js";

let dataDir: string;
beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "charter-cli-"));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const cli = (...args: string[]): Promise<CliRun> => runCapture(args);

/** The parts of a printed verdict (`charter.v1.Verdict` as JSON) the tests read. */
function verdictOf(out: string): {
  decision?: string;
  reason?: { code?: string };
  requirement?: string;
} {
  return JSON.parse(out) as { decision?: string; reason?: { code?: string }; requirement?: string };
}

const files = () => [
  "--catalog",
  join(FIXTURES, "catalog.yaml"),
  "--policy",
  join(FIXTURES, "policy.yaml"),
  "--data-dir",
  dataDir,
];

describe("charter validate", () => {
  it("reports the loaded catalog and policy and exits 0", async () => {
    const r = await cli("validate", ...files());
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ok: catalog demo-1 \(26 actions, 25 tools\), policy demo-policy-1/);
  });

  it("reports every problem with file and subject, and exits 1", async () => {
    const policy = join(dataDir, "bad.yaml");
    writeFileSync(
      policy,
      "version: x\nsources:\n  a:\n    allow: [nope.one]\n  b:\n    kind: sideways\nprofiles:\n  p:\n    sources: [ghost]\n",
    );
    const r = await cli("validate", ...files(), "--policy", policy);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      `${policy}: source a allow: names action "nope.one", which the catalog lacks`,
    );
    expect(r.err).toContain(`${policy}: source b: kind must be grant or narrow`);
    expect(r.err).toContain(`${policy}: profile p: names source "ghost", which the policy lacks`);
    expect(r.err).toContain("3 problems found");
  });
});

describe("charter issue, catalog and check", () => {
  it("issues a token whose catalog and verdicts follow the profile", async () => {
    const issued = await cli(
      "issue",
      ...files(),
      "--profile",
      "owner-assistant",
      "--subject",
      "agent:x",
      "--owner",
      "ana@example.com",
    );
    expect(issued.code).toBe(0);
    const token = issued.out.trim();
    expect(token.split(".")).toHaveLength(3);

    const catalog = await cli("catalog", ...files(), "--token", token, "--dialect", "mcp");
    expect(catalog.code).toBe(0);
    const names = (JSON.parse(catalog.out) as { tools: { name: string }[] }).tools.map(
      (t) => t.name,
    );
    expect(names).toContain("issue_refund");
    expect(names).not.toContain("run_shell");

    const refund = (amount: number) =>
      JSON.stringify({ order_id: "ord_A1B2C3", amount, currency: "EUR", reason: "damaged" });
    const allow = await cli(
      "check",
      ...files(),
      "--token",
      token,
      "--tool",
      "issue_refund",
      "--args",
      refund(20),
    );
    expect([allow.code, verdictOf(allow.out).decision]).toEqual([0, "DECISION_ALLOW"]);
    const deny = await cli(
      "check",
      ...files(),
      "--token",
      token,
      "--tool",
      "run_shell",
      "--args",
      '{"command":"ls"}',
    );
    expect([deny.code, verdictOf(deny.out).reason?.code]).toEqual([1, "EXPLICIT_DENY"]);
    const approval = await cli(
      "check",
      ...files(),
      "--token",
      token,
      "--tool",
      "issue_refund",
      "--args",
      refund(300),
    );
    expect([approval.code, verdictOf(approval.out).requirement]).toEqual([2, "manager"]);
  });

  it("checks under a profile without a token; a shadow profile exits 3", async () => {
    const r = await cli(
      "check",
      ...files(),
      "--profile",
      "owner-assistant-dryrun",
      "--tool",
      "web_search",
      "--args",
      '{"query":"x"}',
    );
    expect([r.code, verdictOf(r.out).decision]).toEqual([3, "DECISION_EFFECT_SUPPRESSED"]);
  });

  it("decides --args that are not JSON as the pipeline does: INVALID_ARGUMENTS (exit 1)", async () => {
    const r = await cli(
      "check",
      ...files(),
      "--profile",
      "owner-assistant",
      "--tool",
      "web_search",
      "--args",
      "{not json",
    );
    expect([r.code, verdictOf(r.out).reason?.code]).toEqual([1, "INVALID_ARGUMENTS"]);
  });

  it("denies a forged token with GRANT_INVALID (exit 1)", async () => {
    const r = await cli("check", ...files(), "--token", "a.b.c", "--tool", "web_search");
    expect([r.code, verdictOf(r.out).reason?.code]).toEqual([1, "GRANT_INVALID"]);
  });
});

describe("usage and configuration errors", () => {
  it.each([
    [["frobnicate"], 64, /unknown command "frobnicate"/],
    [["issue", "--catalog", "x"], 64, /--profile is required/],
    [["validate", "--bogus"], 64, /Unknown option '--bogus'/],
    [
      [
        "issue",
        "--profile",
        "p",
        "--catalog",
        "/nonexistent.yaml",
        "--policy",
        "/nonexistent2.yaml",
      ],
      78,
      /\/nonexistent\.yaml: cannot read: file not found/,
    ],
    [["validate", "--policy", "p.yaml"], 78, /catalog is required/],
  ])("charter %j exits %i with a clear message", async (args, code, message) => {
    const r = await cli(...args);
    expect(r.code).toBe(code);
    expect(r.err).toMatch(message);
  });
});
