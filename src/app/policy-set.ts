import { createHash } from "node:crypto";
import {
  directoryProblems,
  policyRequirements,
  type ApproverDirectory,
  type PolicySet,
} from "../authority/index.js";
import { ConfigError, type CharterConfig } from "../config/config.js";
import { approverDirectoryFromText } from "../load/approvers.js";
import { catalogFromText, policyFromText, readText } from "../load/documents.js";

/** The pair in force with the SHA-256 of the texts it was read from, to tell a changed file from an unchanged one. */
export interface LoadedPolicySet {
  readonly set: PolicySet;
  readonly catalogDigest: string;
  readonly policyDigest: string;
  /** The SHA-256 of the shadow policy's text, when one is configured. */
  readonly shadowDigest?: string;
}

/** The files of the pair, and how many compiled schemas one cache generation holds. */
export type PolicySetFiles = Pick<CharterConfig, "catalog" | "policy"> &
  Partial<Pick<CharterConfig, "schemaCacheSize" | "shadowPolicy" | "approvers">>;

const digest = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * Reads and checks the pair: the policy is checked against the catalog it will be used with, and
 * so is the shadow policy (`shadowPolicy`), when one is configured: a shadow policy that does not
 * load refuses the pair as a live one would.
 */
export async function loadVersionedPolicySet(config: PolicySetFiles): Promise<LoadedPolicySet> {
  const catalogText = await readText(config.catalog);
  const policyText = await readText(config.policy);
  const catalog = catalogFromText(
    catalogText,
    config.catalog,
    config.schemaCacheSize === undefined ? {} : { schemasPerGeneration: config.schemaCacheSize },
  );
  const policy = policyFromText(policyText, config.policy, catalog);
  const approvers = await loadDirectory(config.approvers ?? "", policy);
  const pair = { catalog, policy, ...(approvers ? { approvers } : {}) };
  const shadowFile = config.shadowPolicy ?? "";
  if (shadowFile === "")
    return {
      set: pair,
      catalogDigest: digest(catalogText),
      policyDigest: digest(policyText),
    };
  const shadowText = await readText(shadowFile);
  const shadow = policyFromText(shadowText, shadowFile, catalog);
  return {
    set: { ...pair, shadow },
    catalogDigest: digest(catalogText),
    policyDigest: digest(policyText),
    shadowDigest: digest(shadowText),
  };
}

/** The approver directory in `file` ("" for none), checked against the policy it serves. */
async function loadDirectory(
  file: string,
  policy: PolicySet["policy"],
): Promise<ApproverDirectory | undefined> {
  if (file === "") return undefined;
  const directory = approverDirectoryFromText(await readText(file), file);
  const problems = directoryProblems(directory, policyRequirements(policy));
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `${file}: ${p}`).join("\n"));
  return directory;
}

/** Loads the pair; for callers that do not reload (the CLI's `validate`). */
export async function loadPolicySet(config: PolicySetFiles): Promise<PolicySet> {
  return (await loadVersionedPolicySet(config)).set;
}

/**
 * The pair a reload brings. A file whose content changed while its `version` did not is refused:
 * decisions record the versions they were made under, so one version must name one content.
 */
export async function reloadPolicySet(
  config: PolicySetFiles,
  current: LoadedPolicySet,
): Promise<LoadedPolicySet> {
  const next = await loadVersionedPolicySet(config);
  const problems: string[] = [];
  if (
    next.catalogDigest !== current.catalogDigest &&
    next.set.catalog.version === current.set.catalog.version
  ) {
    problems.push(
      `${config.catalog}: the catalog changed but its version is still "${current.set.catalog.version}"; give the new content a new version`,
    );
  }
  if (
    next.policyDigest !== current.policyDigest &&
    next.set.policy.version === current.set.policy.version
  ) {
    problems.push(
      `${config.policy}: the policy changed but its version is still "${current.set.policy.version}"; give the new content a new version`,
    );
  }
  const { shadow } = current.set;
  if (
    next.set.shadow !== undefined &&
    shadow !== undefined &&
    next.shadowDigest !== current.shadowDigest &&
    next.set.shadow.version === shadow.version
  ) {
    problems.push(
      `${config.shadowPolicy ?? ""}: the shadow policy changed but its version is still "${shadow.version}"; give the new content a new version`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems.join("\n"));
  return next;
}
