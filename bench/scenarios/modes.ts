/**
 * The modes the suite is replayed in: the demo documents as they are (rules on), the demo policy
 * with every source's `run:` list removed (rules off), and with result-reported labels. Each mode
 * names the documents a server loads; the transformed ones are written to a temp directory.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";

/** The repository: the nearest directory above this file with package.json (from bench/ or dist-bench/). */
function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) || !existsSync(join(dir, "fixtures"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("bench/scenarios: cannot find the repository root");
    dir = up;
  }
  return dir;
}

export const ROOT = repositoryRoot();
export const DEMO_CATALOG = join(ROOT, "fixtures", "catalog.yaml");
export const DEMO_POLICY = join(ROOT, "fixtures", "policy.yaml");

export interface Mode {
  readonly id: "off" | "on" | "reports" | "proposed" | "narrowed";
  readonly title: string;
  /** Whether the runner calls ReportResult with `untrusted` for results a door marks so. */
  readonly reports: boolean;
  /** Not the demo's documents: shown apart, as what narrowing would buy. */
  readonly hypothetical: boolean;
  readonly catalog: (dir: string) => string;
  readonly policy: (dir: string) => string;
}

type Doc = Record<string, unknown>;
const readYaml = (file: string): Doc => parse(readFileSync(file, "utf8")) as Doc;

/** The demo policy without any source's `run:` list, written to `dir`. */
export function policyWithoutRunRules(dir: string): string {
  const doc = readYaml(DEMO_POLICY);
  for (const source of Object.values(doc["sources"] as Record<string, Doc>)) delete source["run"];
  const file = join(dir, "policy-no-run-rules.yaml");
  writeFileSync(file, stringify(doc));
  return file;
}

/**
 * The demo catalog with mail's static `untrusted` removed (email.read, email.search bring in
 * `private` alone), written to `dir`: the run learns that a message is untrusted only from a
 * door's report. What narrowing would give if ReportResult could declassify; it fails open when
 * no door reports.
 */
export function catalogMailByReport(dir: string): string {
  const doc = readYaml(DEMO_CATALOG);
  for (const action of doc["actions"] as Doc[])
    if (action["id"] === "email.read" || action["id"] === "email.search")
      action["results"] = { labels: ["private"] };
  const file = join(dir, "catalog-mail-by-report.yaml");
  writeFileSync(file, stringify(doc));
  return file;
}

/**
 * The rule this suite proposes to the owner of fixtures/policy.yaml (not applied there): a refund
 * in a run that has seen untrusted content needs the owner's approval, even without private data.
 * The Rule of Two leaves it alone, since a refund to an attacker's order carries nothing the run
 * read out: it moves money all the same.
 */
export const PROPOSED_RULE = {
  id: "no-refunds-after-untrusted",
  actions: ["refund.issue"],
  seen: ["untrusted"],
  then: "require_approval",
  requirement: "owner",
} as const;

/** The demo policy with PROPOSED_RULE added to owner-assistant's `run:` list, written to `dir`. */
export function policyWithProposedRule(dir: string): string {
  const doc = readYaml(DEMO_POLICY);
  const source = (doc["sources"] as Record<string, Doc>)["owner-assistant"] as Doc;
  source["run"] = [...((source["run"] as unknown[] | undefined) ?? []), { ...PROPOSED_RULE }];
  const file = join(dir, "policy-proposed.yaml");
  writeFileSync(file, stringify(doc));
  return file;
}

/** Whether fixtures/policy.yaml already has PROPOSED_RULE (then the proposed mode is the demo's). */
export function demoHasProposedRule(): boolean {
  const doc = readYaml(DEMO_POLICY);
  const source = (doc["sources"] as Record<string, Doc>)["owner-assistant"] as Doc;
  const run = (source["run"] as unknown[] | undefined) ?? [];
  return run.some(
    (r) => typeof r === "object" && r !== null && (r as Doc)["id"] === PROPOSED_RULE.id,
  );
}

const demoCatalog = () => DEMO_CATALOG;
const demoPolicy = () => DEMO_POLICY;

export const MODES: readonly Mode[] = [
  {
    id: "off",
    title: "rules off",
    reports: false,
    hypothetical: false,
    catalog: demoCatalog,
    policy: policyWithoutRunRules,
  },
  {
    id: "on",
    title: "rules on, static labels",
    reports: false,
    hypothetical: false,
    catalog: demoCatalog,
    policy: demoPolicy,
  },
  {
    id: "reports",
    title: "rules on + reported labels",
    reports: true,
    hypothetical: false,
    catalog: demoCatalog,
    policy: demoPolicy,
  },
  {
    id: "proposed",
    title: "proposed: + refunds after untrusted need approval",
    reports: true,
    hypothetical: true,
    catalog: demoCatalog,
    policy: policyWithProposedRule,
  },
  {
    id: "narrowed",
    title: "hypothetical: mail untrusted by report only",
    reports: true,
    hypothetical: true,
    catalog: catalogMailByReport,
    policy: demoPolicy,
  },
];
