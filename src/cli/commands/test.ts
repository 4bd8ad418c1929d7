import { changedRulesSince, runTestFiles } from "../../app/policy-tests.js";
import { coverageOf, coverageReaches, type TestReport } from "../../authority/index.js";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";

/** Exit codes of `charter test` (78, the files do not load, is the CLI's own for load errors). */
export const TEST_EXIT = { passed: 0, failed: 1, coverage: 2 } as const;

/**
 * `charter test [FILES|DIRS…]`: runs policy test suites against the configured catalog and
 * policy, offline, with the same compose and decide the server serves; prints each failure, a
 * coverage table per rule (or one JSON object with --json) and exits 0 pass, 1 a case failed,
 * 2 rule coverage below --threshold.
 */
export async function testCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      ...CONFIG_FLAGS,
      threshold: { type: "string" },
      json: { type: "boolean" },
      "changed-since": { type: "string" },
    },
    true,
  );
  const threshold = values.threshold;
  if (threshold !== undefined && !/^(\d{1,3})(\.\d{1,6})?$/.test(threshold))
    throw new UsageError(
      `--threshold must be a percentage such as 100 or 87.5, not "${threshold}"`,
    );
  if (threshold !== undefined && Number(threshold) > 100)
    throw new UsageError("--threshold is at most 100");
  const since = values["changed-since"];
  if (since !== undefined && (since === "" || since.startsWith("-")))
    throw new UsageError("--changed-since takes a git ref, such as main or HEAD~1");
  if (positionals.length === 0) throw new UsageError("name the test files or directories to run");
  const config = await configFrom(values, io.env);
  const full = await runTestFiles(config, positionals);
  // With --changed-since, coverage (and the threshold) is over the rules changed since the ref.
  const changed = since === undefined ? undefined : await changedRulesSince(config, since);
  const report = changed === undefined ? full : coverageOf(full, changed);
  const reached =
    threshold === undefined || coverageReaches(report.covered, report.total, threshold);
  if (values.json === true)
    io.out(
      JSON.stringify(
        {
          ...jsonReport(report, threshold, reached),
          ...(since === undefined ? {} : { changedSince: since }),
        },
        null,
        2,
      ),
    );
  else {
    if (since !== undefined)
      io.out(
        `${report.coverage.length} rules new or changed since ${since}; coverage below is theirs`,
      );
    printReport(report, io, threshold, reached);
  }
  if (report.failures.length > 0) return TEST_EXIT.failed;
  return reached ? TEST_EXIT.passed : TEST_EXIT.coverage;
}

function percent(report: TestReport): string {
  if (report.total === 0) return "100";
  // Cut, never rounded up: 99.99 shows as 99.99, never as 100.
  const hundredths = Math.floor((report.covered * 10000) / report.total);
  return (hundredths / 100).toString();
}

function jsonReport(report: TestReport, threshold: string | undefined, reached: boolean) {
  return {
    suites: report.suites,
    cases: report.cases,
    passed: report.passed,
    failed: report.cases - report.passed,
    failures: report.failures,
    coverage: {
      covered: report.covered,
      total: report.total,
      percent: percent(report),
      ...(threshold === undefined ? {} : { threshold, reached }),
      rules: report.coverage,
    },
  };
}

function printReport(
  report: TestReport,
  io: CliIo,
  threshold: string | undefined,
  reached: boolean,
): void {
  for (const f of report.failures) io.out(`FAIL ${f.suite} › ${f.name}: ${f.problem}`);
  const mark = (b: boolean) => (b ? "yes" : "NO");
  const width = Math.max(4, ...report.coverage.map((c) => c.rule.length));
  io.out(`\n${"rule".padEnd(width)}  decided  held  failed`);
  for (const c of report.coverage)
    io.out(
      `${c.rule.padEnd(width)}  ${mark(c.decided).padEnd(7)}  ${mark(c.held).padEnd(4)}  ${mark(c.failed)}`,
    );
  io.out(
    `\nrule coverage ${percent(report)} % (${report.covered} of ${report.total} outcomes)` +
      (threshold === undefined ? "" : `, threshold ${threshold} % ${reached ? "met" : "NOT met"}`),
  );
  io.out(
    `${report.suites} suites, ${report.cases} cases: ${report.passed} passed, ${report.cases - report.passed} failed`,
  );
}
