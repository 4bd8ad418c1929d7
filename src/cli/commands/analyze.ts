import { analyzeFiles } from "../../app/policy-analysis.js";
import { atOrAbove, SEVERITIES, type Finding, type Severity } from "../../authority/index.js";
import type { CliIo } from "../io.js";
import { CONFIG_FLAGS, UsageError, configFrom, parse } from "../options.js";

/** Exit codes of `charter analyze` (78, the files do not load, is the CLI's own for load errors). */
export const ANALYZE_EXIT = { clean: 0, findings: 1 } as const;

const isSeverity = (s: string): s is Severity => (SEVERITIES as readonly string[]).includes(s);

/**
 * `charter analyze [--approvers FILE] [--fail-on info|warning|error] [--json]`: analyzes the
 * configured catalog and policy offline (docs/policy-analysis.md) and prints each finding with
 * its counterexample call (or one JSON object); exits 1 when a finding is at or above --fail-on.
 */
export async function analyzeCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, {
    ...CONFIG_FLAGS,
    approvers: { type: "string" },
    "fail-on": { type: "string" },
    json: { type: "boolean" },
  });
  const failOn = values["fail-on"] ?? "error";
  if (!isSeverity(failOn))
    throw new UsageError(`--fail-on must be one of ${SEVERITIES.join(", ")}, not "${failOn}"`);
  const findings = await analyzeFiles(await configFrom(values, io.env), values.approvers);
  const failing = findings.filter((f) => atOrAbove(f.severity, failOn));
  if (values.json === true) io.out(JSON.stringify({ findings }, null, 2));
  else printFindings(findings, failing.length, failOn, io);
  return failing.length > 0 ? ANALYZE_EXIT.findings : ANALYZE_EXIT.clean;
}

function printFindings(
  findings: readonly Finding[],
  failing: number,
  failOn: Severity,
  io: CliIo,
): void {
  const width = Math.max(7, ...findings.map((f) => f.kind.length));
  for (const f of findings) {
    io.out(`${f.severity.padEnd(7)}  ${f.kind.padEnd(width)}  ${f.subject}: ${f.message}`);
    const c = f.counterexample;
    if (c === undefined) continue;
    const v = c.verdict;
    const why = [
      v.reason,
      v.requirement && `requirement ${v.requirement}`,
      v.rule && `rule ${v.rule}`,
    ]
      .filter((x) => typeof x === "string" && x !== "")
      .join(", ");
    io.out(
      `         e.g. profile ${c.profile}: ${c.tool || c.action} ${JSON.stringify(c.arguments)} -> ${v.decision}${why === "" ? "" : ` (${why})`}`,
    );
  }
  const count = (s: Severity) => findings.filter((f) => f.severity === s).length;
  io.out(
    `${findings.length} findings: ${count("error")} error, ${count("warning")} warning, ${count("info")} info; ${failing} at or above ${failOn}`,
  );
}
