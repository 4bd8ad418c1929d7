import { readFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { isJsonObject } from "../core/json.js";
import { parseDocumentText } from "../load/documents.js";
import { ConfigError } from "./config-error.js";
import { parseListen } from "./listen-address.js";
import { rolesMapText, securityProblems } from "./security-settings.js";
import { telemetryProblems } from "./telemetry-settings.js";

export { ConfigError, isConfigError } from "./config-error.js";
export { isLoopback, parseListen } from "./listen-address.js";
export { parseClientRoles, requiresKek } from "./security-settings.js";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Everything `charter serve` needs. Relative paths resolve against the working directory. */
export interface CharterConfig {
  /** `host:port`. Without an API key or mutual TLS, loopback only (protected mode). Port 0 picks a free port. */
  readonly listen: string;
  /** Where the embedded store lives (`<dataDir>/charter.db`). */
  readonly dataDir: string;
  /**
   * The store's database URL (`postgres://user@host:port/db?schema=name`, `sqlite:<path>`);
   * absent: the embedded SQLite file in `dataDir`. May hold a password: never logged or echoed.
   */
  readonly database?: string;
  readonly catalog: string;
  readonly policy: string;
  /** `iss` of tokens and receipts. */
  readonly issuer: string;
  /** `aud` of tokens and receipts. */
  readonly audience: string;
  readonly receiptTtlSeconds: number;
  /** Largest request or response message, in bytes; larger requests get RESOURCE_EXHAUSTED. */
  readonly maxMessageBytes: number;
  readonly maxBatch: number;
  /** Verified grant tokens remembered so that a hot Authorize path skips signature checks; 0 turns it off. */
  readonly tokenCacheSize: number;
  readonly logLevel: LogLevel;
  /** PEM certificate chain the server presents; with `tlsKey`, the server speaks TLS. "" = plaintext. */
  readonly tlsCert: string;
  /** PEM private key of `tlsCert` (a file only its owner can read). "" = plaintext. */
  readonly tlsKey: string;
  /** PEM CA bundle: when set, every client must present a certificate it signed (mutual TLS). */
  readonly tlsClientCa: string;
  /** Client certificate subject CN -> roles, as `cn=role,role;cn2=role` (or a map in the config file). */
  readonly tlsClientRoles: string;
  /** A file holding the key-encryption key (32 bytes, base64 or hex) that encrypts signing keys at rest. */
  readonly kekFile: string;
  /** The key-encryption key itself (environment only, never the config file). */
  readonly kek: string;
  /** How long an approval waits for its decision and then for its use, in seconds (never past its grant's expiry). */
  readonly approvalTtlSeconds: number;
  /** A signed checkpoint of the audit chain head after this many records (besides the timer and shutdown). */
  readonly auditCheckpointRecords: number;
  /** Seconds between timed checkpoints of the audit chain head (only when records were added). */
  readonly auditCheckpointSeconds: number;
  // Hard limits on hostile input (docs/api.md "Limits"); a request over one is refused before work is done.
  /** Largest `arguments_json` of one call, in UTF-8 bytes. */
  readonly maxArgumentsBytes: number;
  /** Deepest nesting of arrays and objects in a call's arguments. */
  readonly maxArgumentsDepth: number;
  /** Longest id or name field of a request (call_id, tool_name, action_id, subject, owner, profile…), in characters. */
  readonly maxFieldLength: number;
  /** Longest free-text field of a request (purpose, note, reason), in characters. */
  readonly maxTextLength: number;
  /** Largest grant token accepted or issued, in bytes. */
  readonly maxTokenBytes: number;
  /** Most entries of a repeated request field other than batch items (requested_actions…). */
  readonly maxListItems: number;
  /** Bytes of verified tokens the token cache may hold (counted by token length); 0 turns it off. */
  readonly tokenCacheBytes: number;
  /** Schemas one generation of compiled argument validators holds before a new one starts (two are kept). */
  readonly schemaCacheSize: number;
  // Connections and backpressure (grpc-js / HTTP/2 server options).
  /** Most open client connections; more are closed at once. */
  readonly maxConnections: number;
  /** Most concurrent calls (HTTP/2 streams) on one connection. */
  readonly maxConcurrentStreams: number;
  /** Memory one connection may use for frames and responses not yet read, in MiB; past it new calls are refused. */
  readonly maxSessionMemoryMib: number;
  /** Interval of server keepalive pings, in ms. */
  readonly keepaliveTimeMs: number;
  /** How long a keepalive ping may go unanswered before the connection is closed, in ms. */
  readonly keepaliveTimeoutMs: number;
  /** A connection without calls for this long is closed, in ms. */
  readonly connectionIdleMs: number;
  /** A connection older than this is asked to go away (clients reconnect), in ms. */
  readonly connectionAgeMs: number;
  /** How long calls in flight on an aged connection may still finish, in ms. */
  readonly connectionAgeGraceMs: number;
  /** Expired grants are deleted this long after they expire, in seconds. */
  readonly grantRetentionSeconds: number;
  /** How often the server prunes expired grants, in seconds. */
  readonly pruneIntervalSeconds: number;
  /** Server processes `charter serve` runs (node:cluster); 1 = one process, no primary. */
  readonly workers: number;
  /** `host:port` of the Prometheus endpoint (`GET /metrics`); "" = no metrics. Loopback only unless `metricsAllowRemote`. */
  readonly metricsListen: string;
  /** Lets `metricsListen` be a non-loopback address (the endpoint has no authentication). */
  readonly metricsAllowRemote: boolean;
  /** OTLP/HTTP traces endpoint (`http://collector:4318/v1/traces`); "" = no trace export (spans are no-ops). */
  readonly tracingOtlpEndpoint: string;
}

export const DEFAULTS: Omit<CharterConfig, "catalog" | "policy"> = {
  listen: "127.0.0.1:50051",
  dataDir: ".charter",
  issuer: "charter",
  audience: "charter",
  receiptTtlSeconds: 300,
  maxMessageBytes: 1024 * 1024,
  maxBatch: 256,
  tokenCacheSize: 10_000,
  logLevel: "info",
  tlsCert: "",
  tlsKey: "",
  tlsClientCa: "",
  tlsClientRoles: "",
  kekFile: "",
  kek: "",
  approvalTtlSeconds: 300,
  auditCheckpointRecords: 1000,
  auditCheckpointSeconds: 10,
  maxArgumentsBytes: 256 * 1024,
  maxArgumentsDepth: 32,
  maxFieldLength: 256,
  maxTextLength: 4096,
  maxTokenBytes: 64 * 1024,
  maxListItems: 256,
  tokenCacheBytes: 64 * 1024 * 1024,
  schemaCacheSize: 2048,
  maxConnections: 1024,
  maxConcurrentStreams: 16,
  maxSessionMemoryMib: 8,
  keepaliveTimeMs: 60_000,
  keepaliveTimeoutMs: 20_000,
  connectionIdleMs: 300_000,
  connectionAgeMs: 1_800_000,
  connectionAgeGraceMs: 10_000,
  grantRetentionSeconds: 7 * 24 * 3600,
  pruneIntervalSeconds: 3600,
  workers: availableParallelism(),
  metricsListen: "",
  metricsAllowRemote: false,
  tracingOtlpEndpoint: "",
};

/** Environment variables that override the config file, by config key. */
export const ENV_KEYS: Readonly<Record<keyof CharterConfig, string>> = {
  listen: "CHARTER_LISTEN",
  dataDir: "CHARTER_DATA_DIR",
  database: "CHARTER_DATABASE_URL",
  catalog: "CHARTER_CATALOG",
  policy: "CHARTER_POLICY",
  issuer: "CHARTER_ISSUER",
  audience: "CHARTER_AUDIENCE",
  receiptTtlSeconds: "CHARTER_RECEIPT_TTL_SECONDS",
  maxMessageBytes: "CHARTER_MAX_MESSAGE_BYTES",
  maxBatch: "CHARTER_MAX_BATCH",
  tokenCacheSize: "CHARTER_TOKEN_CACHE_SIZE",
  logLevel: "CHARTER_LOG_LEVEL",
  tlsCert: "CHARTER_TLS_CERT",
  tlsKey: "CHARTER_TLS_KEY",
  tlsClientCa: "CHARTER_TLS_CLIENT_CA",
  tlsClientRoles: "CHARTER_TLS_CLIENT_ROLES",
  kekFile: "CHARTER_KEK_FILE",
  kek: "CHARTER_KEK",
  approvalTtlSeconds: "CHARTER_APPROVAL_TTL_SECONDS",
  auditCheckpointRecords: "CHARTER_AUDIT_CHECKPOINT_RECORDS",
  auditCheckpointSeconds: "CHARTER_AUDIT_CHECKPOINT_SECONDS",
  maxArgumentsBytes: "CHARTER_MAX_ARGUMENTS_BYTES",
  maxArgumentsDepth: "CHARTER_MAX_ARGUMENTS_DEPTH",
  maxFieldLength: "CHARTER_MAX_FIELD_LENGTH",
  maxTextLength: "CHARTER_MAX_TEXT_LENGTH",
  maxTokenBytes: "CHARTER_MAX_TOKEN_BYTES",
  maxListItems: "CHARTER_MAX_LIST_ITEMS",
  tokenCacheBytes: "CHARTER_TOKEN_CACHE_BYTES",
  schemaCacheSize: "CHARTER_SCHEMA_CACHE_SIZE",
  maxConnections: "CHARTER_MAX_CONNECTIONS",
  maxConcurrentStreams: "CHARTER_MAX_CONCURRENT_STREAMS",
  maxSessionMemoryMib: "CHARTER_MAX_SESSION_MEMORY_MIB",
  keepaliveTimeMs: "CHARTER_KEEPALIVE_TIME_MS",
  keepaliveTimeoutMs: "CHARTER_KEEPALIVE_TIMEOUT_MS",
  connectionIdleMs: "CHARTER_CONNECTION_IDLE_MS",
  connectionAgeMs: "CHARTER_CONNECTION_AGE_MS",
  connectionAgeGraceMs: "CHARTER_CONNECTION_AGE_GRACE_MS",
  grantRetentionSeconds: "CHARTER_GRANT_RETENTION_SECONDS",
  pruneIntervalSeconds: "CHARTER_PRUNE_INTERVAL_SECONDS",
  workers: "CHARTER_WORKERS",
  metricsListen: "CHARTER_METRICS_LISTEN",
  metricsAllowRemote: "CHARTER_METRICS_ALLOW_REMOTE",
  tracingOtlpEndpoint: "CHARTER_TRACING_OTLP_ENDPOINT",
};

/** Settings that hold a secret: taken from the environment only, never from a config file. */
const SECRET_SETTINGS = new Set<string>(["kek"]);

/** Numeric settings that may be 0: the caches (0 turns them off) and retention (0 prunes at expiry). */
const MAY_BE_ZERO = new Set<keyof CharterConfig>([
  "tokenCacheSize",
  "tokenCacheBytes",
  "grantRetentionSeconds",
]);

const NUMERIC = new Set<keyof CharterConfig>([
  "receiptTtlSeconds",
  "maxMessageBytes",
  "maxBatch",
  "tokenCacheSize",
  "approvalTtlSeconds",
  "auditCheckpointRecords",
  "auditCheckpointSeconds",
  "maxArgumentsBytes",
  "maxArgumentsDepth",
  "maxFieldLength",
  "maxTextLength",
  "maxTokenBytes",
  "maxListItems",
  "tokenCacheBytes",
  "schemaCacheSize",
  "maxConnections",
  "maxConcurrentStreams",
  "maxSessionMemoryMib",
  "keepaliveTimeMs",
  "keepaliveTimeoutMs",
  "connectionIdleMs",
  "connectionAgeMs",
  "connectionAgeGraceMs",
  "grantRetentionSeconds",
  "pruneIntervalSeconds",
  "workers",
]);

/** The token layer's own ceiling on a token's length (`MAX_TOKEN_LENGTH`): maxTokenBytes may not exceed it. */
export const MAX_TOKEN_BYTES_CEILING = 256 * 1024;

/**
 * Resolves the configuration: defaults, then the config file (YAML or JSON), then environment
 * variables, then explicit overrides (command-line flags). Every problem is reported at once.
 */
export async function resolveConfig(options: {
  file?: string;
  env?: Readonly<Record<string, string | undefined>>;
  overrides?: Partial<Record<keyof CharterConfig, string | undefined>>;
}): Promise<CharterConfig> {
  const raw: Record<string, unknown> = { ...DEFAULTS };
  const problems: string[] = [];
  const file = options.file ?? options.env?.["CHARTER_CONFIG"];
  if (file !== undefined && file !== "") {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      throw new ConfigError(
        `${file}: cannot read config file (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      );
    }
    const doc = parseDocumentText(text, file);
    if (!isJsonObject(doc))
      throw new ConfigError(`${file}: a config file must be a map of settings`);
    for (const [key, value] of Object.entries(doc)) {
      if (!Object.hasOwn(ENV_KEYS, key)) problems.push(`${file}: unknown setting "${key}"`);
      else if (SECRET_SETTINGS.has(key))
        problems.push(
          `${file}: "${key}" is a secret; set ${ENV_KEYS[key as keyof CharterConfig]} or kekFile instead`,
        );
      else if (key === "tlsClientRoles" && isJsonObject(value)) raw[key] = rolesMapText(value);
      else raw[key] = value;
    }
  }
  for (const [key, name] of Object.entries(ENV_KEYS)) {
    const value = options.env?.[name];
    if (value !== undefined && value !== "") raw[key] = value;
  }
  for (const [key, value] of Object.entries(options.overrides ?? {}))
    if (value !== undefined) raw[key] = value;

  for (const key of NUMERIC) {
    const value = raw[key];
    const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
    // tokenCacheSize 0 turns the verified-token cache off; every other number must be positive.
    const least = MAY_BE_ZERO.has(key) ? 0 : 1;
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < least) {
      problems.push(`${key} must be a ${least === 0 ? "non-negative" : "positive"} integer`);
    } else raw[key] = n;
  }
  for (const key of ["listen", "dataDir", "issuer", "audience", "catalog", "policy"] as const) {
    if (typeof raw[key] !== "string" || raw[key] === "") {
      problems.push(`${key} is required (config file key "${key}", environment ${ENV_KEYS[key]})`);
    }
  }
  // Checked for its type only: openStore reads the URL, and no message may echo it (a password).
  if (
    raw["database"] !== undefined &&
    (typeof raw["database"] !== "string" || raw["database"] === "")
  ) {
    problems.push("database must be a database URL (postgres://…, sqlite:<path> or file:<path>)");
  }
  if (!(LOG_LEVELS as readonly unknown[]).includes(raw["logLevel"]))
    problems.push(`logLevel must be one of ${LOG_LEVELS.join(", ")}`);
  if (typeof raw["listen"] === "string" && parseListen(raw["listen"]) === undefined)
    problems.push(`listen must be host:port, got "${raw["listen"]}"`);
  problems.push(...securityProblems(raw), ...telemetryProblems(raw));
  if (typeof raw["maxTokenBytes"] === "number" && raw["maxTokenBytes"] > MAX_TOKEN_BYTES_CEILING) {
    problems.push(`maxTokenBytes must be at most ${MAX_TOKEN_BYTES_CEILING}`);
  }
  if (problems.length > 0) throw new ConfigError(problems.join("\n"));
  return raw as unknown as CharterConfig;
}
