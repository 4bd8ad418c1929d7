import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { perfReportMarkdown, writePerfReport, type PerfReport } from "../../bench/perf-report.js";

// docs/performance.md quotes no figure by hand: the benchmarks write their tables under
// docs/perf/ (bench/perf-report.ts) and the page links them.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PERF = join(ROOT, "docs", "perf");
const MACHINE = {
  date: "2026-01-02T03:04:05Z",
  cores: 2,
  cpu: "Test CPU",
  memoryGib: 4,
  os: "linux 6",
  node: "v20.0.0",
  load: 1.25,
};
const REPORT: PerfReport = {
  name: "sample",
  title: "bench:sample — a sample",
  command: "BENCH_ROUNDS=1 npm run bench:sample",
  settings: ["1 round"],
  table: [
    ["scenario", "ratio"],
    ["a|b", "0.50x"],
  ],
  notes: ["What the columns mean."],
};

/** Numbers with the units a benchmark measures in: µs, req/s, calls or decisions per second, ratios. */
const FIGURE = /\d[\d,.]*\s?(?:µs|req\/s|decisions\/s|calls\/s)|\b\d+\.\d+x\b/g;

describe("benchmark reports", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    delete process.env["BENCH_REPORT_DIR"];
    delete process.env["BENCH_REPORT"];
  });

  it("writes the table with the date, the machine and the command", () => {
    const text = perfReportMarkdown(REPORT, MACHINE);
    expect(text.split("\n")[0]).toBe("# bench:sample — a sample");
    expect(text).toContain("- **Measured:** 2026-01-02T03:04:05Z");
    expect(text).toContain("2 cores (Test CPU)");
    expect(text).toContain("load average 1.3 (1 min) as the bench started");
    expect(text).toContain("- **Command:** `BENCH_ROUNDS=1 npm run bench:sample`");
    expect(text).toContain("| scenario | ratio |\n| --- | --- |\n| a\\|b | 0.50x |");
    expect(text).toContain("What the columns mean.");
  });

  it("refuses a report without a header row", () => {
    expect(() => perfReportMarkdown({ ...REPORT, table: [] }, MACHINE)).toThrow(/header row/);
  });

  it("writes docs/perf/<name>.md, or BENCH_REPORT_DIR, and nothing with BENCH_REPORT=0", () => {
    const dir = mkdtempSync(join(tmpdir(), "charter-perf-"));
    dirs.push(dir);
    process.env["BENCH_REPORT_DIR"] = dir;
    expect(writePerfReport(ROOT, REPORT)).toBe(join(dir, "sample.md"));
    expect(readFileSync(join(dir, "sample.md"), "utf8")).toContain("| a\\|b | 0.50x |");
    rmSync(join(dir, "sample.md"));
    process.env["BENCH_REPORT"] = "0";
    expect(writePerfReport(ROOT, REPORT)).toBeUndefined();
    expect(existsSync(join(dir, "sample.md"))).toBe(false);
  });

  it("keeps every file of docs/perf/ generated, and linked from docs/performance.md", () => {
    const page = readFileSync(join(ROOT, "docs", "performance.md"), "utf8");
    const files = existsSync(PERF) ? readdirSync(PERF).filter((f) => f.endsWith(".md")) : [];
    const problems = files.flatMap((f) => {
      const text = readFileSync(join(PERF, f), "utf8");
      return [
        ...(/^- \*\*Measured:\*\* \S+$/m.test(text) ? [] : [`${f}: no Measured line`]),
        ...(/^- \*\*Machine:\*\* \d+ cores/m.test(text) ? [] : [`${f}: no Machine line`]),
        ...(/^- \*\*Command:\*\* `npm run bench:|^- \*\*Command:\*\* `[A-Z_]+=/m.test(text)
          ? []
          : [`${f}: no Command line`]),
        ...(page.includes(`(perf/${f})`) || /^grpc-/.test(f) ? [] : [`${f}: not linked`]),
      ];
    });
    expect(problems).toEqual([]);
    expect(page).toContain("(perf/grpc.md)");
    expect(page).toContain("(perf/decide.md)");
  });

  it("quotes no measured figure in README.md or docs/ outside docs/perf/", () => {
    const pages = [
      "README.md",
      ...readdirSync(join(ROOT, "docs"))
        .filter((f) => f.endsWith(".md"))
        .map((f) => `docs/${f}`),
    ];
    const figures = pages.flatMap((f) =>
      [...readFileSync(join(ROOT, f), "utf8").matchAll(FIGURE)].map((m) => `${f}: ${m[0]}`),
    );
    expect(figures).toEqual([]);
  });
});
