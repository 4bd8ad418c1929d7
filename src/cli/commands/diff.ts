import { diffFiles } from "../../app/policy-analysis.js";
import type { PolicyDiff } from "../../authority/index.js";
import type { CliIo } from "../io.js";
import { resolveSomeSettings } from "../../config/config.js";
import { CONFIG_FLAGS, UsageError, parse } from "../options.js";

/** Exit codes of `charter diff` (78, a version does not load, is the CLI's own for load errors). */
export const DIFF_EXIT = { equal: 0, differs: 1 } as const;

/**
 * `charter diff OLD NEW [--old-catalog C] [--new-catalog C] [--json]`: compares two policy
 * versions (each a file or `git:REF:path`; catalogs default to the configured one) per profile
 * and action, with a counterexample call for each difference, and the tools each profile's
 * catalog gains, loses or changes; exits 0 when equal, 1 when anything differs.
 */
export async function diffCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      ...CONFIG_FLAGS,
      "old-catalog": { type: "string" },
      "new-catalog": { type: "string" },
      json: { type: "boolean" },
    },
    true,
  );
  const [oldPolicy, newPolicy, extra] = positionals;
  if (oldPolicy === undefined || newPolicy === undefined || extra !== undefined)
    throw new UsageError("name two policy versions: charter diff OLD NEW");
  // Only the catalog is read from the configuration (the policies are OLD and NEW), and only
  // when a side names none.
  const catalog = async () => {
    const file = values.config;
    const { catalog } = await resolveSomeSettings(["catalog"], {
      ...(file === undefined ? {} : { file }),
      env: io.env,
      ...(values.catalog === undefined ? {} : { overrides: { catalog: values.catalog } }),
    });
    return catalog;
  };
  const diff = await diffFiles({
    oldPolicy,
    newPolicy,
    oldCatalog: values["old-catalog"] ?? (await catalog()),
    newCatalog: values["new-catalog"] ?? (await catalog()),
  });
  if (values.json === true) io.out(JSON.stringify(diff, null, 2));
  else printDiff(diff, io);
  return diff.equal ? DIFF_EXIT.equal : DIFF_EXIT.differs;
}

function printDiff(diff: PolicyDiff, io: CliIo): void {
  for (const p of diff.profiles) io.out(`profile ${p.profile}: ${p.old} -> ${p.new}`);
  const changed = diff.actions.filter((a) => a.change !== "equal");
  for (const a of changed) {
    io.out(`${a.profile}  ${a.action}  ${a.change}`);
    const c = a.counterexample;
    if (c === undefined) continue;
    const said = (v: { decision: string; reason?: string; requirement?: string }) =>
      `${v.decision}${v.requirement === undefined ? (v.reason === undefined ? "" : ` (${v.reason})`) : ` (${v.requirement})`}`;
    io.out(
      `  e.g. ${c.tool || a.action} ${JSON.stringify(c.arguments)}: ${said(c.old)} -> ${said(c.new)}`,
    );
  }
  for (const t of diff.catalogs) {
    const parts = [
      ...t.gained.map((n) => `+${n}`),
      ...t.lost.map((n) => `-${n}`),
      ...t.changed.map((c) => `${c.tool} ${c.from} -> ${c.to}`),
    ];
    io.out(`catalog ${t.profile}: ${parts.join(", ")}`);
  }
  const shown = (n: number | null) => (n === null ? "none" : String(n));
  for (const l of diff.limits)
    io.out(`limit ${l.profile}  ${l.limit}  ${shown(l.old)} -> ${shown(l.new)}  ${l.change}`);
  const equal = diff.actions.length - changed.length;
  io.out(
    diff.equal
      ? `equal: ${equal} profile/action pairs decide the same`
      : `${changed.length} profile/action pairs differ, ${equal} equal; ${diff.catalogs.length} catalogs, ${diff.limits.length} limits and ${diff.profiles.length} profiles changed`,
  );
}
