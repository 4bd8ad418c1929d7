import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { fencedBlocks, parseMarkdown, type MarkdownDoc } from "./markdown.js";
import { PageRun, type NotRunnable } from "./shell-runner.js";

// Every shell example of the README and of docs/ (each ```sh, ```bash, ```shell or ```console
// block), run as written through the real CLI by test/docs/shell-runner.ts, which says what it
// understands. The few commands it does not run are listed here with the reason and where they
// are run instead; a rule no docs line uses any more fails the test, so the list stays short.
const NOT_RUNNABLE: readonly NotRunnable[] = [
  {
    pattern: /^npm (ci && npm )?start\b/,
    reason:
      "serves until stopped: .ci/run starts `npm start` on a clean clone, runs the walkthrough's allow, deny and approval against it, then stops it with SIGTERM",
  },
  {
    pattern: /^npm test\b/,
    reason: "runs the whole suite, this file included; .ci/run runs it",
  },
  {
    pattern: /^CHARTER_DATABASE_URL=\S+ npm start$/,
    reason:
      "needs a PostgreSQL database of its own and serves until stopped; the PostgreSQL store and replicas are tested in test/store and test/server/replicas.test.ts",
  },
  {
    pattern: /^charter mcp-gateway\b/,
    reason:
      "an MCP stdio server for an agent, in front of an upstream MCP server; test/gateway/mcp-gateway.test.ts runs it against a real upstream",
  },
  {
    pattern: /^charter (approvals watch|audit tail)\b/,
    reason:
      "follows until Ctrl-C; test/cli/approvals-cli.test.ts and test/cli/audit-verify.test.ts run them",
  },
  {
    pattern: /^charter audit (verify --witness|archive)\b/,
    reason:
      "needs a witness file a server wrote and a store to prune; test/cli/audit-witness.test.ts runs them against a real server's log",
  },
];

const SHELL_LANGS = new Set(["sh", "bash", "shell", "console", "zsh"]);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** README.md and every Markdown page under docs/. */
function pages(): MarkdownDoc[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? walk(join(dir, e.name))
        : e.name.endsWith(".md")
          ? [relative(ROOT, join(dir, e.name))]
          : [],
    );
  return ["README.md", ...walk(join(ROOT, "docs")).sort()].map((name) =>
    parseMarkdown(name, readFileSync(join(ROOT, name), "utf8")),
  );
}

const scratchDirs: string[] = [];
afterAll(() => {
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs every shell block of a page in order, in one scratch directory; answers what ran. */
async function runPage(doc: MarkdownDoc): Promise<PageRun> {
  const scratch = mkdtempSync(join(tmpdir(), "charter-docs-"));
  scratchDirs.push(scratch);
  const run = new PageRun(doc.name, scratch, NOT_RUNNABLE);
  try {
    for (const block of fencedBlocks(doc).filter((b) => SHELL_LANGS.has(b.lang)))
      await run.runBlock(block.lines, block.line + 2);
  } finally {
    await run.stop();
  }
  return run;
}

const all = pages();

describe("the shell examples of the docs", () => {
  for (const doc of all) {
    const blocks = fencedBlocks(doc).filter((b) => SHELL_LANGS.has(b.lang));
    if (blocks.length === 0) continue;
    it(`${doc.name}: every example runs as written`, { timeout: 120_000 }, async () => {
      const run = await runPage(doc);
      expect(run.ran.length + run.skipped.length).toBeGreaterThan(0);
    });
  }

  it("holds the walkthroughs the README and docs/graph-runs.md promise", () => {
    const charterLines = (name: string) =>
      fencedBlocks(all.find((d) => d.name === name) as MarkdownDoc)
        .filter((b) => SHELL_LANGS.has(b.lang))
        .flatMap((b) => b.lines)
        .filter((l) => l.startsWith("charter ")).length;
    expect(charterLines("README.md")).toBeGreaterThanOrEqual(6);
    expect(charterLines("docs/graph-runs.md")).toBeGreaterThanOrEqual(10);
  });

  it("labels every code block that holds a command as shell, so that it is run", () => {
    const unlabelled = all.flatMap((d) =>
      fencedBlocks(d)
        .filter((b) => !SHELL_LANGS.has(b.lang) && b.lang !== "yaml" && b.lang !== "json")
        .filter((b) => b.lines.some((l) => /^\s*(\$ )?(charter|npm|npx|node|export) /.test(l)))
        .map((b) => `${d.name}:${b.line + 1} (\`\`\`${b.lang})`),
    );
    expect(unlabelled).toEqual([]);
  });

  it("uses every not-runnable rule somewhere (the exceptions stay few)", () => {
    const lines = all.flatMap((d) =>
      fencedBlocks(d)
        .filter((b) => SHELL_LANGS.has(b.lang))
        .flatMap((b) => b.lines.map((l) => l.trim())),
    );
    const unused = NOT_RUNNABLE.filter((n) => !lines.some((l) => n.pattern.test(l))).map((n) =>
      String(n.pattern),
    );
    expect(unused).toEqual([]);
  });
});
