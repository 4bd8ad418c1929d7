import { LoadError } from "../core/errors.js";
import { isJsonObject } from "../core/json.js";
import type { ApproverDirectory } from "../core/policy-analysis.js";
import { parseDocumentText, readText } from "./documents.js";

/**
 * Reads an approver directory for `charter analyze --approvers FILE`: YAML or JSON
 * `{approvers: {principal: [role, …]}}`, the roles a deployment's principals hold
 * (`approve:<requirement>` among them). A file outside that shape is a LoadError naming it.
 */
export async function loadApproverDirectory(file: string): Promise<ApproverDirectory> {
  const doc = parseDocumentText(await readText(file), file);
  const bad = (message: string) => new LoadError([{ file, message }]);
  if (!isJsonObject(doc) || Object.keys(doc).some((k) => k !== "approvers"))
    throw bad("an approver directory is {approvers: {principal: [role, …]}}");
  const approvers = doc["approvers"];
  if (!isJsonObject(approvers)) throw bad("approvers must be a map from principal to roles");
  const out = new Map<string, readonly string[]>();
  for (const [principal, roles] of Object.entries(approvers)) {
    if (!Array.isArray(roles) || !roles.every((r): r is string => typeof r === "string"))
      throw bad(`approvers.${principal} must be a list of roles`);
    out.set(principal, roles);
  }
  return out;
}
