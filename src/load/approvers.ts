import {
  approveRole,
  isApproveRole,
  type ApproverDirectory,
  type DirectoryEntry,
} from "../core/approvers.js";
import { ACTION_ID } from "../core/catalog.js";
import { LoadError } from "../core/errors.js";
import { isJsonObject, type JsonValue } from "../core/json.js";
import { parseDocumentText, readText } from "./documents.js";

const SHAPE =
  "an approver directory is {approvers: {principal: [role, …] | {roles: [role, …], owners?: [owner, …], teams?: [team, …], slack?: USER_ID}}, teams?: {team: [owner, …]}}";
const ENTRY_KEYS = new Set(["roles", "owners", "teams", "slack"]);

/**
 * Reads an approver directory (the `approvers` setting, and `charter analyze --approvers FILE`):
 * YAML or JSON naming, per principal, the requirements it approves — a role is a requirement's
 * name (`manager`) or `approve:<requirement>` — and optionally whose approvals: `owners` and
 * `teams` (a team is a list of owners under `teams`). A file outside that shape is a LoadError
 * naming it and the entry.
 */
export async function loadApproverDirectory(file: string): Promise<ApproverDirectory> {
  return approverDirectoryFromText(await readText(file), file);
}

/** The directory in `text` (read from `file`, for the errors). */
export function approverDirectoryFromText(text: string, file: string): ApproverDirectory {
  const doc = parseDocumentText(text, file);
  const problems: string[] = [];
  if (!isJsonObject(doc) || Object.keys(doc).some((k) => k !== "approvers" && k !== "teams"))
    throw new LoadError([{ file, message: SHAPE }]);
  const teams = new Map<string, ReadonlySet<string>>();
  const rawTeams = doc["teams"] ?? {};
  if (!isJsonObject(rawTeams)) problems.push("teams must be a map from team to its owners");
  else
    for (const [team, members] of Object.entries(rawTeams)) {
      const list = strings(members);
      if (list === undefined) problems.push(`teams.${team} must be a list of owners`);
      else teams.set(team, new Set(list));
    }
  const approvers = new Map<string, DirectoryEntry>();
  const raw = doc["approvers"];
  if (!isJsonObject(raw)) problems.push("approvers must be a map from principal to roles");
  else
    for (const [principal, value] of Object.entries(raw)) {
      const entry = readEntry(`approvers.${principal}`, value, problems);
      if (entry) approvers.set(principal, entry);
    }
  if (problems.length > 0) throw new LoadError(problems.map((message) => ({ file, message })));
  return { approvers, teams };
}

function readEntry(
  at: string,
  value: JsonValue | undefined,
  problems: string[],
): DirectoryEntry | undefined {
  const spec = Array.isArray(value) ? { roles: value } : value;
  if (!isJsonObject(spec) || Object.keys(spec).some((k) => !ENTRY_KEYS.has(k))) {
    problems.push(`${at}: ${SHAPE}`);
    return undefined;
  }
  const roleNames = strings(spec["roles"]);
  if (roleNames === undefined || roleNames.length === 0) {
    problems.push(`${at}.roles must be a non-empty list of requirement names`);
    return undefined;
  }
  const roles: `approve:${string}`[] = [];
  for (const name of roleNames) {
    const role = isApproveRole(name) ? name : ACTION_ID.test(name) ? approveRole(name) : undefined;
    if (role === undefined) problems.push(`${at}.roles: "${name}" is not a requirement name`);
    else roles.push(role);
  }
  const owners = strings(spec["owners"]);
  const teams = strings(spec["teams"]);
  if (spec["owners"] !== undefined && owners === undefined)
    problems.push(`${at}.owners must be a list of owners`);
  if (spec["teams"] !== undefined && teams === undefined)
    problems.push(`${at}.teams must be a list of teams`);
  const slack = spec["slack"];
  if (slack !== undefined && typeof slack !== "string")
    problems.push(`${at}.slack must be a Slack user id`);
  return {
    roles: [...new Set(roles)],
    ...(owners ? { owners } : {}),
    ...(teams ? { teams } : {}),
    ...(typeof slack === "string" ? { slackUserId: slack } : {}),
  };
}

/** The strings of a list of strings; undefined otherwise. */
function strings(value: JsonValue | undefined): string[] | undefined {
  return Array.isArray(value) && value.every((v): v is string => typeof v === "string")
    ? value
    : undefined;
}
