import { spawnSync, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

// scripts/check-commit-subjects.sh on throwaway repositories: subjects of at most 72 characters
// after the commit where the rule started, older history left alone.

const SCRIPT = new URL("../../scripts/check-commit-subjects.sh", import.meta.url).pathname;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const GIT_ENV = {
  PATH: process.env["PATH"] ?? "",
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();
}

/** A repository with one empty commit per subject; answers its directory and the commits' hashes. */
function repo(subjects: readonly string[]): { dir: string; commits: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "charter-subjects-"));
  dirs.push(dir);
  git(dir, "init", "-q", "-b", "main");
  const commits = subjects.map((subject) => {
    git(dir, "commit", "-q", "--allow-empty", "-m", subject, "-m", "the body");
    return git(dir, "rev-parse", "HEAD");
  });
  return { dir, commits };
}

function check(dir: string, since: string | undefined) {
  const env = since === undefined ? GIT_ENV : { ...GIT_ENV, CHARTER_SUBJECTS_SINCE: since };
  const run = spawnSync("bash", [SCRIPT], { cwd: dir, env, encoding: "utf8" });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

const long = (n: number) => "x".repeat(n);

describe("scripts/check-commit-subjects.sh", () => {
  it("passes subjects of 72 characters (counted as characters) after the cutoff, ignoring older ones", () => {
    const { dir, commits } = repo([long(150), "the cutoff", long(72), `${"é".repeat(71)}…`]);
    const run = check(dir, commits[1]);
    expect(run).toMatchObject({ code: 0, err: "" });
    expect(run.out).toMatch(/2 checked, none over 72 characters/);
  });

  it("fails on a subject of 73 characters after the cutoff, naming the commit and its length", () => {
    const { dir, commits } = repo(["the cutoff", "short", long(73), "short again"]);
    const run = check(dir, commits[0]);
    expect(run.code).toBe(1);
    expect(run.err).toContain(`${(commits[2] ?? "").slice(0, 12)} (73 characters): ${long(73)}`);
    expect(run.err).not.toMatch(/short/);
  });

  it("checks what a shallow clone has when the cutoff is beyond it, and says so", () => {
    const { dir, commits } = repo(["the cutoff", long(80), "ok 1", "ok 2"]);
    const clone = mkdtempSync(join(tmpdir(), "charter-subjects-clone-"));
    dirs.push(clone);
    git(tmpdir(), "clone", "-q", "--depth", "2", `file://${dir}`, clone);
    const shallow = check(clone, commits[0]);
    expect(shallow).toMatchObject({ code: 0 });
    expect(shallow.out).toMatch(/2 checked, .*shallow clone/);
    git(clone, "fetch", "-q", "--depth", "3");
    const deeper = check(clone, commits[0]);
    expect(deeper.code).toBe(1);
    expect(deeper.err).toMatch(/\(80 characters\)/);
  });

  it("refuses a cutoff that is not in a full repository, rather than passing", () => {
    const { dir } = repo([long(80)]);
    const run = check(dir, "0123456789abcdef0123456789abcdef01234567");
    expect(run.code).toBe(2);
    expect(run.err).toMatch(/is not in this repository/);
  });
});
