import {
  analyzePolicy,
  diffPolicies,
  type Finding,
  type PolicyDiff,
  type PolicyVersion,
} from "../authority/index.js";
import type { CharterConfig } from "../config/config.js";
import { loadApproverDirectory } from "../load/approvers.js";
import { catalogFromText, policyFromText } from "../load/documents.js";
import { DEFAULT_TEST_NOW } from "../load/test-suites.js";
import { readVersionText } from "../load/version-text.js";
import { loadPolicySet } from "./policy-set.js";

/** The instant analyses compose and decide at: fixed, so the same files give the same report. */
export const ANALYSIS_NOW = DEFAULT_TEST_NOW;

/**
 * `charter analyze`: the configured pair loaded as `charter serve` loads it, analyzed offline;
 * with an approver directory (`approvers`: the file `--approvers` names, else the configured
 * one) each approval requirement is checked against its holders.
 */
export async function analyzeFiles(
  config: CharterConfig,
  approvers: string | undefined,
): Promise<Finding[]> {
  // The directory is the analysis's input, not checked against the policy as serving checks it.
  const { catalog, policy } = await loadPolicySet({ ...config, approvers: "" });
  const file = approvers ?? config.approvers;
  const directory = file === "" ? undefined : await loadApproverDirectory(file);
  return analyzePolicy(policy, catalog, {
    now: ANALYSIS_NOW,
    ...(directory === undefined ? {} : { approvers: directory }),
  });
}

/** The two versions `charter diff` compares: policy and catalog each a file or `git:REF:path`. */
export interface DiffInputs {
  readonly oldPolicy: string;
  readonly newPolicy: string;
  readonly oldCatalog: string;
  readonly newCatalog: string;
}

/** `charter diff`: both versions loaded (each policy checked against its own catalog) and compared. */
export async function diffFiles(inputs: DiffInputs): Promise<PolicyDiff> {
  const older = await loadVersion(inputs.oldPolicy, inputs.oldCatalog);
  const newer = await loadVersion(inputs.newPolicy, inputs.newCatalog);
  return diffPolicies(older, newer, ANALYSIS_NOW);
}

async function loadVersion(policyFile: string, catalogFile: string): Promise<PolicyVersion> {
  const catalog = catalogFromText(await readVersionText(catalogFile), catalogFile);
  const policy = policyFromText(await readVersionText(policyFile), policyFile, catalog);
  return { policy, catalog };
}
