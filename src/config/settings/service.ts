import { address, choice, optionalChoice, databaseUrl, integer, text } from "./types.js";
import { setting } from "./setting.js";

/** The levels of the JSON log, most severe first; `silent` logs nothing. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Where the service listens, what it serves, its store and its identity. */
export const SERVICE_SETTINGS = {
  listen: setting({
    type: address({ required: true }),
    default: "127.0.0.1:50051",
    env: "CHARTER_LISTEN",
    flag: "listen",
    flagValue: "HOST:PORT",
    description:
      "host:port; port 0 picks a free port. Without an API key or mutual TLS (protected mode) only loopback addresses are served: the name is resolved and every address must be loopback",
    reload: "restart",
  }),
  dataDir: setting({
    type: text({ shape: "directory", required: true }),
    default: ".charter",
    env: "CHARTER_DATA_DIR",
    flag: "data-dir",
    flagValue: "DIR",
    description:
      "the embedded store lives at `<dataDir>/charter.db` (SQLite, WAL) with the signing keys; created 0700, its files 0600; a data dir or store file other users can read, or one that cannot be written, stops start-up (exit 78)",
    reload: "restart",
  }),
  createStore: setting({
    type: optionalChoice(["never", "if-missing"]),
    defaultText: "never",
    env: "CHARTER_CREATE_STORE",
    description:
      "`if-missing`: `charter serve` creates a new store when there is none and no store id file (`<store>.id`) says one was there; `never`: only `charter init` or `charter serve --init` creates one. A store that vanished, was replaced by another or is not Charter's is always refused",
    reload: "restart",
    optional: true,
  }),
  database: setting({
    type: databaseUrl(),
    defaultText: "(none: the embedded SQLite file)",
    env: "CHARTER_DATABASE_URL",
    flag: "database",
    flagValue: "URL",
    description:
      "the store's database: `postgres://user[:password]@host:port/database?schema=name`, or `sqlite:<path>` / `file:<path>`. Never logged or echoed; prefer the environment variable to a config file for a URL with a password",
    reload: "restart",
    secret: "url-password",
    optional: true,
  }),
  catalog: setting({
    type: text({ shape: "file", required: true }),
    defaultText: "(required)",
    env: "CHARTER_CATALOG",
    flag: "catalog",
    flagValue: "FILE",
    description: "the catalog file (YAML or JSON)",
    reload: "content",
  }),
  policy: setting({
    type: text({ shape: "file", required: true }),
    defaultText: "(required)",
    env: "CHARTER_POLICY",
    flag: "policy",
    flagValue: "FILE",
    description: "the policy file (YAML or JSON)",
    reload: "content",
  }),
  shadowPolicy: setting({
    type: text({ shape: 'file or "" (off)' }),
    default: "",
    env: "CHARTER_SHADOW_POLICY",
    flag: "shadow-policy",
    flagValue: "FILE",
    description:
      "a candidate policy decided beside `policy` against the same catalog: every decision it would decide otherwise records a flip in its audit record and `charter_shadow_flips_total`, never in the verdict (see Shadow policies in policy-testing.md). It loads and reloads with the pair: one that does not load stops start-up (exit 78) or a reload",
    reload: "content",
  }),
  approvers: setting({
    type: text({ shape: 'file or "" (none)' }),
    default: "",
    env: "CHARTER_APPROVERS",
    flag: "approvers",
    flagValue: "FILE",
    description:
      "the approver directory (YAML or JSON): per principal, the requirements it approves and for which owners or teams (approvals.md, Who may answer). Keys, sessions and the offline `--by` count for its roles. It reloads with the pair; a role naming no requirement of the policy stops start-up (exit 78) or a reload",
    reload: "content",
  }),
  issuer: setting({
    type: text({ required: true }),
    default: "charter",
    env: "CHARTER_ISSUER",
    flag: "issuer",
    flagValue: "S",
    description: "`iss` of grant tokens and receipts",
    reload: "restart",
  }),
  audience: setting({
    type: text({ required: true }),
    default: "charter",
    env: "CHARTER_AUDIENCE",
    flag: "audience",
    flagValue: "S",
    description: "`aud` of grant tokens and receipts",
    reload: "restart",
  }),
  receiptTtlSeconds: setting({
    type: integer({ min: 1 }),
    default: 300,
    env: "CHARTER_RECEIPT_TTL_SECONDS",
    description: "lifetime of a decision receipt, in seconds",
    reload: "restart",
  }),
  approvalTtlSeconds: setting({
    type: integer({ min: 1 }),
    default: 300,
    env: "CHARTER_APPROVAL_TTL_SECONDS",
    description:
      "how long an approval waits for its decision and then for its use, in seconds (never past its grant's expiry)",
    reload: "restart",
  }),
  auditCheckpointRecords: setting({
    type: integer({ min: 1 }),
    default: 1000,
    env: "CHARTER_AUDIT_CHECKPOINT_RECORDS",
    description: "sign a checkpoint of the audit chain head after this many records",
    reload: "restart",
  }),
  auditCheckpointSeconds: setting({
    type: integer({ min: 1 }),
    default: 10,
    env: "CHARTER_AUDIT_CHECKPOINT_SECONDS",
    description: "and at least this often, in seconds, while records are added (and at shutdown)",
    reload: "restart",
  }),
  auditRefusalIntervalMs: setting({
    type: integer({ min: 1, max: 3_600_000 }),
    default: 1000,
    env: "CHARTER_AUDIT_REFUSAL_INTERVAL_MS",
    description:
      "refused calls without a valid credential are audited as one `call.unauthenticated` record per peer address, RPC, reason and interval of this many milliseconds, with a `count` (the first of a key at once), so a flood writes a bounded number of records",
    reload: "restart",
  }),
  auditWitnessFile: setting({
    type: text({ shape: 'file or ""' }),
    default: "",
    env: "CHARTER_AUDIT_WITNESS_FILE",
    description:
      "every signed audit checkpoint is also appended (JSON lines, O_APPEND, fsync'd; created 0600) to this file, which must be outside the data dir; `charter audit verify --witness FILE` then detects truncation and rewrites of what it covers",
    reload: "restart",
  }),
  auditWitnessCommand: setting({
    type: text({
      shape: 'JSON array of strings or ""',
      check: (value, key) => {
        let argv: unknown;
        try {
          argv = JSON.parse(value);
        } catch {
          argv = undefined;
        }
        return Array.isArray(argv) &&
          argv.length > 0 &&
          argv.every((a) => typeof a === "string") &&
          argv[0] !== ""
          ? undefined
          : `${key} must be a JSON array of strings, the program first`;
      },
    }),
    default: "",
    env: "CHARTER_AUDIT_WITNESS_COMMAND",
    description:
      "an argv run for every signed audit checkpoint with it (one JSON line) on stdin, to ship it off the machine; a failure or a run past 10 s is logged at error, counted (`charter_audit_witness_failures_total`) and retried at the next checkpoint, never delaying a decision",
    reload: "restart",
  }),
  grantRetentionSeconds: setting({
    type: integer({ min: 0 }),
    default: 7 * 24 * 3600,
    env: "CHARTER_GRANT_RETENTION_SECONDS",
    description:
      "expired grants are deleted this long after they expire, in seconds (ancestors of live grants are kept; their approvals, decisions and audit records stay); 0 prunes at expiry",
    reload: "restart",
  }),
  retainDecisionInputsDays: setting({
    type: integer({ min: 0, max: 3660 }),
    default: 0,
    env: "CHARTER_RETAIN_DECISION_INPUTS_DAYS",
    description:
      "keep each decision's inputs (its arguments and the run it was decided on) this many days, so `charter replay` can decide it again under a candidate policy; sealed under the key-encryption key when one is set, never in the audit chain, pruned every `pruneIntervalSeconds`; 0 keeps none (and prunes what an earlier setting kept)",
    reload: "restart",
  }),
  pruneIntervalSeconds: setting({
    type: integer({ min: 1 }),
    default: 3600,
    env: "CHARTER_PRUNE_INTERVAL_SECONDS",
    description:
      "how often the server prunes expired grants and decision inputs past their time, in seconds",
    reload: "restart",
  }),
  logLevel: setting({
    type: choice(LOG_LEVELS),
    default: "info",
    env: "CHARTER_LOG_LEVEL",
    flag: "log-level",
    flagValue: "LEVEL",
    description: "the JSON log's level (one line per RPC on stdout)",
    reload: "restart",
  }),
} as const;
