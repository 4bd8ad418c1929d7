import { ROLES } from "../authority/api-keys.js";
import { CLIENT_COMMANDS, CLIENT_SETTINGS } from "../config/config.js";
import { configFlagsUsage } from "./options.js";

// What `charter <command> --help` prints: each command's synopsis and what it does, kept apart
// from the command modules so that help loads none of them. The configuration flags every
// command takes are listed once, in CONFIG_FLAGS_USAGE, and printed under every command's help.

const clientFlags = Object.values(CLIENT_SETTINGS)
  .map((s) => `--${s.flag} ${s.flagValue}`)
  .join(" ");
const clientEnv = Object.values(CLIENT_SETTINGS)
  .map((s) => s.env)
  .join(", ");

/** The configuration flags (and environment) every command reads, printed under each help. */
export const CONFIG_FLAGS_USAGE = `${configFlagsUsage()}
  ${CLIENT_COMMANDS.join(", ")}: ${clientFlags}
    (${clientEnv}); CHARTER_TOKEN stands in for --token`;

export const SERVE_USAGE = `charter serve [--workers N] [--init]
  serves the gRPC API until SIGTERM or SIGINT (SIGHUP reloads catalog and policy); loopback only
  until an API key or mutual TLS is configured
  --workers N   server processes (default: one per core; 1 = a single process; CHARTER_WORKERS)
  --init        create the store when there is none (as createStore: if-missing)`;

export const INIT_USAGE = `charter init
  creates a new, empty store on the data dir (or the database), with its id and a signing key;
  refuses when a store is there already. After a store was lost: starts anew (a new store id and
  new signing keys: tokens, grants, API keys and the audit log of the old store are gone)`;

export const ISSUE_USAGE = `charter issue --profile P [--subject S] [--owner O] [--purpose TEXT] [--action ID]...
             [--ttl SECONDS] [--shadow] [--json] [--server HOST:PORT [--api-key KEY]]
  composes a grant for the profile and prints its token (--json: the grant and the token)`;

export const CATALOG_USAGE = `charter catalog --token T [--dialect D] [--view] [--server HOST:PORT [--api-key KEY]]
  prints the tool catalog the grant gives, rendered for a framework
  --dialect D   neutral (default), openai_chat, openai_responses, anthropic, mcp, gemini,
                langchain, pydantic_ai
  --view        the neutral catalog view instead of the rendered tools`;

export const CHECK_USAGE = `charter check (--token T | --profile P) (--tool NAME | --action ID) [--args JSON]
             [--approval-id A] [--server HOST:PORT [--api-key KEY]]
  decides one call (offline on the data dir, or by --server) and prints the verdict
  a target: --operation KIND [--node N --definition ID] | --agent NAME [--agent-version V
            --delegated-token T]
  a step:   --run ID [--tool-call ID | --activation ID [--attempt N]]; --call-id ID
            (--run alone: a new step of the run, decided on what the run has seen and done)
  exit code: 0 allow, 1 deny, 2 requires approval, 3 effect suppressed`;

export const CONFIG_USAGE = `charter config [--json]
  prints the effective configuration of the other commands (the same --config file,
  CHARTER_* environment and flags; --workers as charter serve takes it): every setting, its
  value and where it came from (default, file, env or flag); then --server and --api-key of
  the commands that can ask a running server. Secrets are redacted (the KEK, the API key, a
  database URL's password). --json prints one JSON object; an invalid configuration exits 78.`;

export const VALIDATE_USAGE = `charter validate
  loads catalog and policy and reports every problem; exit 0 when both load, 1 otherwise`;

export const MCP_GATEWAY_USAGE = `charter mcp-gateway --token T [--server HOST:PORT [--api-key K]] [--run ID]
                    (-- COMMAND ARGS... | --upstream-url URL)
  a stdio MCP proxy fronting an upstream MCP server with a grant: decides locally on the data
  dir, or by the Charter server at --server, every call in one run per session (or --run ID);
  stdout is the MCP channel, the rest goes to stderr`;

/** Each subcommand's usage, as `charter approvals <subcommand> --help` prints it. */
export const APPROVALS_SUBCOMMANDS: Readonly<Record<string, string>> = {
  list: `charter approvals list --owner O [--page-size N] [--page-token T]
    [--status pending|approved|rejected|expired|consumed|superseded]`,
  show: "charter approvals show ID",
  approve: "charter approvals approve ID --by WHO [--note TEXT]",
  reject: "charter approvals reject ID --by WHO [--note TEXT]",
  watch: "charter approvals watch --owner O [--after SEQ] [--count N]",
  endorse: `charter approvals endorse ID --bounds JSON --calls K --minutes T [--by WHO]
    approves calls like ID's (same grant, action, requirement; arguments within the bounds)`,
  endorsements:
    "charter approvals endorsements [--owner O] [--active] [--page-size N] [--page-token T]",
  "revoke-endorsement": "charter approvals revoke-endorsement ID [--by WHO]",
  link: `charter approvals link ID --approver PRINCIPAL
    prints a single-use inbox link (a full URL) that lets PRINCIPAL answer the approval once`,
};

export const APPROVALS_USAGE = `${Object.values(APPROVALS_SUBCOMMANDS).join("\n")}
(each with --server HOST:PORT [--api-key KEY], or offline on the data dir)`;

/** Each subcommand's usage, as `charter audit <subcommand> --help` prints it. */
export const AUDIT_SUBCOMMANDS: Readonly<Record<string, string>> = {
  verify: `charter audit verify [--witness FILE] [--archive FILE]
    checks the hash chain and the signed checkpoints; exit 1 naming the first broken record;
    --witness: every witnessed checkpoint is in the store and the chain recomputes to it;
    --archive: the archive's chain holds and joins the kept log`,
  archive: `charter audit archive --before SEQ|ISO-TIME --archive FILE
    appends whole checkpointed segments before that checkpoint to FILE, then prunes them`,
  export: `charter audit export [--out FILE] [--after SEQ]
    writes the records as JSONL (progress on stderr for large logs)`,
  tail: `charter audit tail [--lines N] [--count N]
    prints the last N records (default 10), then follows new ones`,
};

export const AUDIT_USAGE = `${Object.values(AUDIT_SUBCOMMANDS).join("\n")}
(offline only, on the data dir: the audit log has no RPC)`;

/** Each subcommand's usage, as `charter keys <subcommand> --help` prints it. */
export const KEYS_SUBCOMMANDS: Readonly<Record<string, string>> = {
  create: `charter keys create --principal NAME --role ROLE [--role ROLE…]
    a caller API key; prints its secret once; roles: ${ROLES.join(", ")}, approve:<requirement>`,
  list: `charter keys list
    every API key (id, principal, roles, created, revoked)`,
  revoke: `charter keys revoke KEY_ID
    revokes an API key at once`,
  "rotate-signing": `charter keys rotate-signing
    a new signing key; old tokens verify until they expire`,
};

export const KEYS_USAGE = `${Object.values(KEYS_SUBCOMMANDS).join("\n")}
(offline only, on the data dir: there is no key-management RPC, so --server is refused)`;

export const REPLAY_USAGE = `charter replay --candidate-policy FILE [--candidate-catalog FILE] [--from SEQ] [--to SEQ] [--json] [--fail-on-flip allow]
  decides the recorded decisions of the audit log (seq FROM to TO, inclusive; all by default) again
  under a candidate policy (and catalog), offline on the data dir or the database: each grant made
  again from its recorded request, each call from its retained inputs (retainDecisionInputsDays).
  Prints the transition matrix, every flip with its decision ids (newly allowed first) and what
  could not be replayed and why; --json prints one object (replayed, notReplayable, unchanged,
  matrix, flips). Exit 1 with --fail-on-flip allow when any call would newly be allowed; 78 when
  the candidate does not load. Docs: docs/policy-testing.md`;

export const TEST_USAGE = `charter test FILE|DIR... [--threshold PERCENT] [--changed-since REF] [--json]
  runs policy test suites (a directory: its .yaml, .yml and .json files) against the configured catalog and
  policy, offline: each case's verdict, reason, requirement and rule, and the tools the grant's
  catalog shows, under delegated grants, per profile (the matrix form) and over multi-call scenarios
  (on a temporary store); prints failures and rule coverage (each rule seen deciding, its condition seen
  holding and failing); --changed-since REF: only of the rules new or changed since a git ref.
  Exit 0 pass, 1 a case failed, 2 coverage below --threshold (compared exactly), 78 the catalog,
  policy or test files do not load. Format: docs/policy-testing.md`;

export const ANALYZE_USAGE = `charter analyze [--approvers FILE] [--fail-on info|warning|error] [--json]
  analyzes the configured catalog and policy offline, deciding sample calls per profile and action:
  shadowed and redundant rules, conditions always or never true, actions listed but never
  callable, approval requirements no approvers can meet (with --approvers, a file
  {approvers: {principal: [roles]}}); each finding with a counterexample call where one exists.
  Exit 0 none at or above --fail-on (default error), 1 some, 78 the files do not load.
  Format: docs/policy-analysis.md`;

export const DIFF_USAGE = `charter diff OLD NEW [--old-catalog FILE] [--new-catalog FILE] [--json]
  compares two policy versions (each a file or git:REF:path; catalogs default to the configured
  one, also as git:REF:path) per profile and action: equal, more permissive, less permissive or
  changed, each difference with a call and its old and new verdicts; and the tools each profile's
  catalog gains, loses or changes. Exit 0 equal, 1 anything differs, 78 a version does not load.
  Format: docs/policy-analysis.md`;
