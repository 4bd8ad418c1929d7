import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runCapture } from "../support/cli.js";
import { codeBlocks, parseMarkdown, section } from "./markdown.js";

// The README's "Graph runs, sub-agents and steps" walkthrough, run as written: every `charter`
// line of its sh block through the real CLI (offline, on a temp data dir), each `#   → …` line
// checked against what the command before it printed.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const readme = parseMarkdown("README.md", readFileSync(join(ROOT, "README.md"), "utf8"));
const lines = codeBlocks(section(readme, 2, "Graph runs, sub-agents and steps"), "sh")[0] ?? [];
const dataDir = mkdtempSync(join(tmpdir(), "charter-readme-graph-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Splits a shell command line into words: single-quoted words kept whole, comments dropped. */
function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.replace(/\s+#.*$/, "").matchAll(/'([^']*)'|(\S+)/g))
    out.push(m[1] ?? m[2] ?? "");
  return out;
}

describe("the README graph-run walkthrough", () => {
  it("has a walkthrough to run", () => {
    expect(lines.filter((l) => l.startsWith("charter ")).length).toBeGreaterThanOrEqual(10);
  });

  it(
    "runs as written, each command printing what its → line says",
    { timeout: 60_000 },
    async () => {
      const env: Record<string, string> = { CHARTER_DATA_DIR: dataDir };
      let approvalId = "";
      let last: { out: string; decisionId: string } | undefined;
      const seen = new Set<string>();
      for (const raw of lines) {
        const line = raw.trim();
        const exported = /^export (\w+)=(.*)$/.exec(line);
        if (exported) {
          const [, name, value] = exported as unknown as [string, string, string];
          const inner = /^\$\((charter .*)\)$/.exec(value.trim());
          if (inner) {
            const run = await runCapture(words(inner[1] as string).slice(1), env);
            expect(run.code, run.err).toBe(0);
            env[name] = run.out.trim();
          } else env[name] = words(value)[0] ?? "";
          continue;
        }
        if (line.startsWith("charter ")) {
          const args = words(line)
            .slice(1)
            .map((w) => (w === "apr_…" ? approvalId : w));
          const run = await runCapture(args, env);
          expect([0, 1, 2, 3], `${line}\n${run.err}`).toContain(run.code);
          approvalId = /"approvalId": "(apr_[^"]+)"/.exec(run.out)?.[1] ?? approvalId;
          last = { out: run.out, decisionId: /"decisionId": "([^"]+)"/.exec(run.out)?.[1] ?? "" };
          continue;
        }
        const expected = /^#\s+→ (.*)$/.exec(line)?.[1];
        if (expected === undefined || last === undefined) continue;
        if (expected.startsWith("ok:")) expect(last.out.trim()).toBe(expected);
        for (const code of expected.match(/\b[A-Z][A-Z_]{3,}\b/g) ?? [])
          expect(last.out, line).toContain(code);
        if (expected.includes("the same decision"))
          expect(seen.has(last.decisionId), line).toBe(true);
        if (expected.includes("a new decision"))
          expect(seen.has(last.decisionId), line).toBe(false);
        seen.add(last.decisionId);
      }
    },
  );
});
