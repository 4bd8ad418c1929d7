import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { LoadError, type LoadProblem } from "../core/errors.js";
import type { CaseExpect, TestSuite } from "../core/policy-test.js";
import { isScenario, isSingleExpectation } from "../core/policy-test-suite.js";
import { parseDocumentText, readText } from "./documents.js";

/** When the suites are decided unless a suite says `now`: 2026-01-01T00:00:00Z. */
export const DEFAULT_TEST_NOW = 1767225600;

const SCHEMA_FILE = new URL("../../schemas/charter-test.schema.json", import.meta.url);

/** The suite schema's validator, compiled per load (a CLI run loads its suites once). */
async function validator() {
  const schema = JSON.parse(await readFile(SCHEMA_FILE, "utf8")) as object;
  return new Ajv2020({ allErrors: true, strict: true, strictRequired: false }).compile(schema);
}

/**
 * Reads `charter test` suites: each path a YAML (or JSON) file, or a directory whose `.yaml`,
 * `.yml` and `.json` files are read (recursively, in name order). Every file is checked against
 * schemas/charter-test.schema.json, the one format the docs describe; any problem in any file is
 * a LoadError naming the file and where.
 */
export async function loadTestSuites(paths: readonly string[]): Promise<TestSuite[]> {
  const files: string[] = [];
  for (const path of paths) files.push(...(await suiteFiles(path)));
  if (files.length === 0)
    throw new LoadError([{ file: paths.join(", "), message: "no test files found" }]);
  const check = await validator();
  const problems: LoadProblem[] = [];
  const suites: TestSuite[] = [];
  for (const file of files) {
    let value: unknown;
    try {
      value = parseDocumentText(await readText(file), file);
    } catch (err) {
      if (err instanceof LoadError) {
        problems.push(...err.problems);
        continue;
      }
      throw err;
    }
    if (!check(value)) {
      const errors = (check.errors ?? []) as {
        instancePath: string;
        keyword: string;
        message?: string;
      }[];
      // An if/then/else failure is also reported by the branch that failed, more precisely.
      for (const e of errors.filter((e) => e.keyword !== "if"))
        problems.push({ file, message: `${e.instancePath || "/"}: ${e.message ?? "is invalid"}` });
      continue;
    }
    const suite = value as Omit<TestSuite, "now"> & { readonly now?: number };
    const shape = shapeProblems(suite);
    if (shape.length > 0) {
      problems.push(...shape.map((message) => ({ file, message })));
      continue;
    }
    suites.push({ ...suite, now: suite.now ?? DEFAULT_TEST_NOW });
  }
  if (problems.length > 0) throw new LoadError(problems);
  return suites;
}

/** What the schema cannot say: a refused grant has no cases; a per-profile map names each profile. */
function shapeProblems(suite: Omit<TestSuite, "now">): string[] {
  const problems: string[] = [];
  if (suite.expect !== undefined && suite.cases !== undefined)
    problems.push("/cases: a suite whose grant must be refused (expect.refused) has no cases");
  const profiles = suite.grant.profiles;
  const check = (expect: CaseExpect, at: string) => {
    if (isSingleExpectation(expect)) return;
    if (profiles === undefined) {
      problems.push(`${at}: an expectation per profile needs grant.profiles (the matrix form)`);
      return;
    }
    for (const name of Object.keys(expect))
      if (!profiles.includes(name))
        problems.push(`${at}/${name}: "${name}" is not one of grant.profiles`);
    for (const name of profiles)
      if (!Object.hasOwn(expect, name))
        problems.push(`${at}: no expectation for profile "${name}"`);
  };
  (suite.cases ?? []).forEach((c, i) => {
    if (isScenario(c))
      c.calls.forEach((call, j) => check(call.expect, `/cases/${i}/calls/${j}/expect`));
    else check(c.expect, `/cases/${i}/expect`);
  });
  return problems;
}

async function suiteFiles(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new LoadError([{ file: path, message: "cannot read: file not found" }]);
  }
  if (!info.isDirectory()) return [path];
  const out: string[] = [];
  const entries = (await readdir(path, { withFileTypes: true })).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  for (const entry of entries) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) out.push(...(await suiteFiles(full)));
    else if (/\.(ya?ml|json)$/.test(entry.name)) out.push(full);
  }
  return out;
}
