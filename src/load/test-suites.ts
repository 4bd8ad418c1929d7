import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { LoadError, type LoadProblem } from "../core/errors.js";
import type { TestSuite } from "../core/policy-test.js";
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
      const errors = (check.errors ?? []) as { instancePath: string; message?: string }[];
      for (const e of errors)
        problems.push({ file, message: `${e.instancePath || "/"}: ${e.message ?? "is invalid"}` });
      continue;
    }
    const suite = value as Omit<TestSuite, "now"> & { readonly now?: number };
    suites.push({ ...suite, now: suite.now ?? DEFAULT_TEST_NOW });
  }
  if (problems.length > 0) throw new LoadError(problems);
  return suites;
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
