import { changedRules, runPolicyTests, type TestReport } from "../authority/index.js";
import { catalogFromText, policyFromText } from "../load/documents.js";
import { GIT_PREFIX, readVersionText } from "../load/version-text.js";
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

/**
 * The rules of the configured policy that are new or changed since git ref `ref` (`changedRules`):
 * the policy and its catalog as they were at the ref (`git show`), against the pair as it is now.
 */
export async function changedRulesSince(config: CharterConfig, ref: string): Promise<string[]> {
  const at = (file: string) => `${GIT_PREFIX}${ref}:${file}`;
  const catalog = catalogFromText(await readVersionText(at(config.catalog)), at(config.catalog));
  const before = policyFromText(
    await readVersionText(at(config.policy)),
    at(config.policy),
    catalog,
  );
  const { policy } = await loadPolicySet(config);
  return changedRules(before, policy);
}
