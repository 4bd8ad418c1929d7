import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES } from "../support/charter-server.js";
import { runCapture } from "../support/cli.js";

// `charter diff` of the demo policy against a widened copy, against itself, and against a
// version read from a git ref (this file runs `git`: it is in E2E_FILES).

let dir: string;
let widened: string;
const DEMO = join(FIXTURES, "policy.yaml");
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "charter-diff-cli-"));
  widened = join(dir, "widened.yaml");
  const text = readFileSync(DEMO, "utf8");
  const raised = text.replace(
    "amount: { exclusiveMinimum: 100 }",
    "amount: { exclusiveMinimum: 250 }",
  );
  expect(raised).not.toBe(text);
  writeFileSync(widened, raised);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const catalog = ["--catalog", join(FIXTURES, "catalog.yaml")];
const cli = (...args: string[]) => runCapture(["diff", ...catalog, ...args]);

interface Diff {
  equal: boolean;
  actions: {
    profile: string;
    action: string;
    change: string;
    counterexample?: {
      tool: string;
      arguments: Record<string, unknown>;
      old: { decision: string; requirement?: string };
      new: { decision: string };
    };
  }[];
  catalogs: unknown[];
  profiles: unknown[];
}

describe("charter diff", () => {
  it("the demo against a copy with the refund limit raised: only refund.issue, more permissive, with a call", async () => {
    const r = await cli(DEMO, widened, "--json");
    expect(r.err).toBe("");
    expect(r.code).toBe(1);
    const d = JSON.parse(r.out) as Diff;
    const differing = d.actions.filter((a) => a.change !== "equal");
    expect(differing.map((a) => `${a.profile} ${a.action} ${a.change}`)).toEqual([
      "owner-assistant refund.issue more permissive",
      "owner-assistant-dryrun refund.issue more permissive",
    ]);
    expect(differing[0]?.counterexample).toMatchObject({
      tool: "issue_refund",
      arguments: { amount: 101 },
      old: { decision: "require_approval", requirement: "manager" },
      new: { decision: "allow" },
    });
    expect(d.catalogs).toEqual([]);
    expect(d.profiles).toEqual([]);
    const table = await cli(DEMO, widened);
    expect(table.out).toMatch(/^owner-assistant +refund\.issue +more permissive$/m);
    expect(table.out).toMatch(/"amount":101.*: require_approval \(manager\) -> allow/);
  });

  it("the demo against itself: all equal, exit 0", async () => {
    const r = await cli(DEMO, DEMO);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^equal: \d+ profile\/action pairs decide the same$/m);
  });

  it("reads a version at a git ref (git:REF:path)", async () => {
    const repo = join(dir, "repo");
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", repo, ...args], { stdio: "pipe" });
    execFileSync("git", ["init", "-q", repo]);
    writeFileSync(join(repo, "policy.yaml"), readFileSync(DEMO, "utf8"));
    git("add", "policy.yaml");
    git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "demo");
    writeFileSync(join(repo, "policy.yaml"), readFileSync(widened, "utf8"));
    const r = await cli(`git:HEAD:${join(repo, "policy.yaml")}`, join(repo, "policy.yaml"));
    expect(r.err).toBe("");
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^owner-assistant +refund\.issue +more permissive$/m);
    const same = await cli(`git:HEAD:${join(repo, "policy.yaml")}`, DEMO);
    expect(same.code).toBe(0);
    const missing = await cli(`git:no-such-ref:${join(repo, "policy.yaml")}`, DEMO);
    expect(missing.code).toBe(78);
    expect(missing.err).toContain(
      `git:no-such-ref:${join(repo, "policy.yaml")}: cannot read: git show failed`,
    );
  });

  it.each([[[DEMO]], [[DEMO, DEMO, DEMO]]])(
    "not two versions: usage error 64 (%j)",
    async (args) => {
      const r = await cli(...args);
      expect(r.code).toBe(64);
      expect(r.err).toMatch(/name two policy versions/);
    },
  );

  it("a version that does not load exits 78 naming it", async () => {
    const r = await cli(DEMO, join(dir, "nowhere.yaml"));
    expect(r.code).toBe(78);
    expect(r.err).toContain("nowhere.yaml: cannot read: file not found");
  });
});
