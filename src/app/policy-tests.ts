import { runPolicyTests, type TestReport } from "../authority/index.js";
import type { CharterConfig } from "../config/config.js";
import { loadTestSuites } from "../load/test-suites.js";
import { observeScenarios } from "./policy-scenarios.js";
import { loadPolicySet } from "./policy-set.js";

/**
 * Runs the `charter test` suites at `paths` against the configured catalog and policy, offline:
 * the pair loads as `charter serve` would load it, the suites as their schema says, and each case
 * is composed and decided by the same pure functions the server calls; multi-call scenarios run
 * through the stateful pipeline on a temporary store first (`observeScenarios`).
 */
export async function runTestFiles(
  config: CharterConfig,
  paths: readonly string[],
): Promise<TestReport> {
  const { catalog, policy } = await loadPolicySet(config);
  const suites = await loadTestSuites(paths);
  return runPolicyTests(suites, policy, catalog, await observeScenarios(config, suites));
}
