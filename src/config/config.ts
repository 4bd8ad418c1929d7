import { readFile } from "node:fs/promises";
import { isIPv4 } from "node:net";
import { isJsonObject } from "../core/json.js";
import { parseDocumentText } from "../load/documents.js";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Everything `charter serve` needs. Relative paths resolve against the working directory. */
export interface CharterConfig {
  /** `host:port`; loopback only until caller authentication exists. Port 0 picks a free port. */
  readonly listen: string;
  /** Where the embedded store lives (`<dataDir>/charter.db`). */
  readonly dataDir: string;
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
  /** How long an approval waits for its decision and then for its use, in seconds (never past its grant's expiry). */
  readonly approvalTtlSeconds: number;
  /** A signed checkpoint of the audit chain head after this many records (besides the timer and shutdown). */
  readonly auditCheckpointRecords: number;
  /** Seconds between timed checkpoints of the audit chain head (only when records were added). */
  readonly auditCheckpointSeconds: number;
}

export const DEFAULTS: Omit<CharterConfig, "catalog" | "policy"> = {
  listen: "127.0.0.1:50051",
  dataDir: ".charter",
  issuer: "charter",
  audience: "charter",
  receiptTtlSeconds: 300,
  maxMessageBytes: 4 * 1024 * 1024,
  maxBatch: 256,
  tokenCacheSize: 10_000,
  logLevel: "info",
  approvalTtlSeconds: 300,
  auditCheckpointRecords: 1000,
  auditCheckpointSeconds: 10,
};

/** Environment variables that override the config file, by config key. */
export const ENV_KEYS: Readonly<Record<keyof CharterConfig, string>> = {
  listen: "CHARTER_LISTEN",
  dataDir: "CHARTER_DATA_DIR",
  catalog: "CHARTER_CATALOG",
  policy: "CHARTER_POLICY",
  issuer: "CHARTER_ISSUER",
  audience: "CHARTER_AUDIENCE",
  receiptTtlSeconds: "CHARTER_RECEIPT_TTL_SECONDS",
  maxMessageBytes: "CHARTER_MAX_MESSAGE_BYTES",
  maxBatch: "CHARTER_MAX_BATCH",
  tokenCacheSize: "CHARTER_TOKEN_CACHE_SIZE",
  logLevel: "CHARTER_LOG_LEVEL",
  approvalTtlSeconds: "CHARTER_APPROVAL_TTL_SECONDS",
  auditCheckpointRecords: "CHARTER_AUDIT_CHECKPOINT_RECORDS",
  auditCheckpointSeconds: "CHARTER_AUDIT_CHECKPOINT_SECONDS",
};

const NUMERIC = new Set<keyof CharterConfig>([
  "receiptTtlSeconds",
  "maxMessageBytes",
  "maxBatch",
  "tokenCacheSize",
  "approvalTtlSeconds",
  "auditCheckpointRecords",
  "auditCheckpointSeconds",
]);

/** A configuration that cannot be used; the message lists every problem. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export function isConfigError(err: unknown): err is ConfigError {
  return err instanceof ConfigError;
}

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
      throw new ConfigError(`${file}: cannot read config file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    const doc = parseDocumentText(text, file);
    if (!isJsonObject(doc)) throw new ConfigError(`${file}: a config file must be a map of settings`);
    for (const [key, value] of Object.entries(doc)) {
      if (!Object.hasOwn(ENV_KEYS, key)) problems.push(`${file}: unknown setting "${key}"`);
      else raw[key] = value;
    }
  }
  for (const [key, name] of Object.entries(ENV_KEYS)) {
    const value = options.env?.[name];
    if (value !== undefined && value !== "") raw[key] = value;
  }
  for (const [key, value] of Object.entries(options.overrides ?? {})) if (value !== undefined) raw[key] = value;

  for (const key of NUMERIC) {
    const value = raw[key];
    const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
    // tokenCacheSize 0 turns the verified-token cache off; every other number must be positive.
    const least = key === "tokenCacheSize" ? 0 : 1;
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < least) {
      problems.push(`${key} must be a ${least === 0 ? "non-negative" : "positive"} integer`);
    } else raw[key] = n;
  }
  for (const key of ["listen", "dataDir", "issuer", "audience", "catalog", "policy"] as const) {
    if (typeof raw[key] !== "string" || raw[key] === "") {
      problems.push(`${key} is required (config file key "${key}", environment ${ENV_KEYS[key]})`);
    }
  }
  if (!(LOG_LEVELS as readonly unknown[]).includes(raw["logLevel"])) problems.push(`logLevel must be one of ${LOG_LEVELS.join(", ")}`);
  if (typeof raw["listen"] === "string" && parseListen(raw["listen"]) === undefined) problems.push(`listen must be host:port, got "${raw["listen"]}"`);
  if (problems.length > 0) throw new ConfigError(problems.join("\n"));
  return raw as unknown as CharterConfig;
}

/** Splits `host:port` (`[::1]:50051` for IPv6). */
export function parseListen(listen: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(listen);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  return { host: (m[1] ?? m[2]) as string, port };
}

/** True for loopback hosts: 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || (isIPv4(host) && host.startsWith("127."));
}
