import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isLoadError } from "../../src/core/errors.js";
import {
  DEFAULTS,
  ENV_KEYS,
  isConfigError,
  isLoopback,
  parseListen,
  resolveConfig,
  type CharterConfig,
} from "../../src/config/config.js";

const dir = mkdtempSync(join(tmpdir(), "charter-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** Writes a config file into the temp dir and answers its path. */
function configFile(text: string, ext = "yaml"): string {
  const file = join(dir, `config-${++files}.${ext}`);
  writeFileSync(file, text);
  return file;
}

/** The error resolveConfig rejects with; fails the test when it resolves. */
async function problemsOf(options: Parameters<typeof resolveConfig>[0]): Promise<string[]> {
  const err = await resolveConfig(options).then(
    (config) => expect.fail(`expected a ConfigError, got ${JSON.stringify(config)}`),
    (e: unknown) => e,
  );
  expect(isConfigError(err)).toBe(true);
  return (err as Error).message.split("\n");
}

const REQUIRED_ENV = { CHARTER_CATALOG: "cat.yaml", CHARTER_POLICY: "pol.yaml" };

const FULL_FILE = `# every setting
listen: "[::1]:7000"
dataDir: /var/lib/charter
catalog: file-catalog.yaml
policy: file-policy.yaml
issuer: file-issuer
audience: file-audience
receiptTtlSeconds: 60
maxMessageBytes: 1024
maxBatch: 8
tokenCacheSize: 5
logLevel: debug
tlsCert: server.pem
tlsKey: server-key.pem
tlsClientCa: clients-ca.pem
tlsClientRoles: { gateway-1: [gateway], ops: [admin, auditor] }
tlsSpiffeRoles: { "spiffe://prod.example/gw": [gateway], "spiffe://prod.example/ops/*": [auditor] }
kekFile: /etc/charter/kek
approvalTtlSeconds: 120
auditCheckpointRecords: 50
auditCheckpointSeconds: 3
`;

describe("resolveConfig()", () => {
  it("starts from the defaults, needing only catalog and policy", async () => {
    const config = await resolveConfig({ env: REQUIRED_ENV });
    expect(config).toEqual({ ...DEFAULTS, catalog: "cat.yaml", policy: "pol.yaml" });
    expect(DEFAULTS).toMatchObject({
      listen: "127.0.0.1:50051",
      dataDir: ".charter",
      maxBatch: 256,
      receiptTtlSeconds: 300,
      logLevel: "info",
    });
  });

  it("reads every setting from a YAML config file, numbers as numbers", async () => {
    const file = configFile(FULL_FILE);
    const config = await resolveConfig({ file, env: {} });
    expect(config).toEqual<CharterConfig>({
      ...DEFAULTS,
      listen: "[::1]:7000",
      dataDir: "/var/lib/charter",
      catalog: "file-catalog.yaml",
      policy: "file-policy.yaml",
      issuer: "file-issuer",
      audience: "file-audience",
      receiptTtlSeconds: 60,
      maxMessageBytes: 1024,
      maxBatch: 8,
      tokenCacheSize: 5,
      logLevel: "debug",
      tlsCert: "server.pem",
      tlsKey: "server-key.pem",
      tlsClientCa: "clients-ca.pem",
      tlsClientRoles: "gateway-1=gateway;ops=admin,auditor",
      tlsSpiffeRoles: "spiffe://prod.example/gw=gateway;spiffe://prod.example/ops/*=auditor",
      kekFile: "/etc/charter/kek",
      kek: "",
      approvalTtlSeconds: 120,
      auditCheckpointRecords: 50,
      auditCheckpointSeconds: 3,
    });
  });

  it("accepts a JSON config file and keeps the defaults it does not name", async () => {
    const file = configFile(
      JSON.stringify({ catalog: "c.json", policy: "p.json", maxBatch: 3 }),
      "json",
    );
    expect(await resolveConfig({ file })).toEqual({
      ...DEFAULTS,
      catalog: "c.json",
      policy: "p.json",
      maxBatch: 3,
    });
  });

  it("finds the config file through CHARTER_CONFIG, and an explicit file wins over it", async () => {
    const fromEnv = configFile("catalog: env-named.yaml\npolicy: p.yaml\n");
    const explicit = configFile("catalog: explicit.yaml\npolicy: p.yaml\n");
    expect((await resolveConfig({ env: { CHARTER_CONFIG: fromEnv } })).catalog).toBe(
      "env-named.yaml",
    );
    expect(
      (await resolveConfig({ file: explicit, env: { CHARTER_CONFIG: fromEnv } })).catalog,
    ).toBe("explicit.yaml");
  });

  it("lets environment variables beat the file, and ignores empty ones", async () => {
    const file = configFile(
      "catalog: file.yaml\npolicy: file-policy.yaml\nissuer: file-issuer\nmaxBatch: 8\nlogLevel: debug\n",
    );
    const config = await resolveConfig({
      file,
      env: {
        CHARTER_CATALOG: "env.yaml",
        CHARTER_ISSUER: "env-issuer",
        CHARTER_MAX_BATCH: "16",
        CHARTER_LOG_LEVEL: "",
        CHARTER_POLICY: undefined,
      },
    });
    expect(config).toMatchObject({
      catalog: "env.yaml",
      policy: "file-policy.yaml",
      issuer: "env-issuer",
      maxBatch: 16,
      logLevel: "debug",
    });
  });

  it("lets explicit overrides (flags) beat the environment and the file", async () => {
    const file = configFile("catalog: file.yaml\npolicy: file-policy.yaml\nlisten: 127.0.0.1:1\n");
    const config = await resolveConfig({
      file,
      env: {
        CHARTER_LISTEN: "127.0.0.1:2",
        CHARTER_CATALOG: "env.yaml",
        CHARTER_LOG_LEVEL: "warn",
      },
      overrides: { listen: "127.0.0.1:3", catalog: "flag.yaml", logLevel: "error" },
    });
    expect(config).toMatchObject({
      listen: "127.0.0.1:3",
      catalog: "flag.yaml",
      policy: "file-policy.yaml",
      logLevel: "error",
    });
  });

  it("reads the database url from the file, CHARTER_DATABASE_URL or the flag, and has none by default (embedded SQLite)", async () => {
    expect((await resolveConfig({ env: REQUIRED_ENV })).database).toBeUndefined();
    const file = configFile("catalog: c.yaml\npolicy: p.yaml\ndatabase: sqlite:file.db\n");
    expect((await resolveConfig({ file })).database).toBe("sqlite:file.db");
    // A shared database needs signing keys sealed: the KEK comes with it.
    const env = {
      CHARTER_DATABASE_URL: "postgres://charter@db/charter?schema=a",
      CHARTER_KEK: "kek",
    };
    expect((await resolveConfig({ file, env })).database).toBe(
      "postgres://charter@db/charter?schema=a",
    );
    expect(
      (await resolveConfig({ file, env, overrides: { database: "postgres://charter@db/other" } }))
        .database,
    ).toBe("postgres://charter@db/other");
  });

  it("refuses a postgres:// database without a key-encryption key: signing keys are never stored in clear in a shared database", async () => {
    expect(
      await problemsOf({
        env: { ...REQUIRED_ENV, CHARTER_DATABASE_URL: "postgres://charter@db/charter" },
      }),
    ).toEqual([
      "a postgres:// database is shared: signing keys must be encrypted at rest; set kekFile or CHARTER_KEK",
    ]);
  });

  it("refuses a database that is not a non-empty string, without echoing it", async () => {
    const file = configFile("catalog: c.yaml\npolicy: p.yaml\ndatabase: [postgres]\n");
    expect(await problemsOf({ file })).toEqual([
      "database must be a database URL (postgres://…, sqlite:<path> or file:<path>)",
    ]);
    expect(await problemsOf({ env: REQUIRED_ENV, overrides: { database: "" } })).toEqual([
      "database must be a database URL (postgres://…, sqlite:<path> or file:<path>)",
    ]);
  });

  it("reads every numeric setting from an environment string", async () => {
    const config = await resolveConfig({
      env: {
        ...REQUIRED_ENV,
        CHARTER_RECEIPT_TTL_SECONDS: "42",
        CHARTER_MAX_MESSAGE_BYTES: "65536",
        CHARTER_MAX_BATCH: "7",
        CHARTER_TOKEN_CACHE_SIZE: "100",
      },
    });
    expect(config).toMatchObject({
      receiptTtlSeconds: 42,
      maxMessageBytes: 65536,
      maxBatch: 7,
      tokenCacheSize: 100,
    });
    expect(typeof config.maxBatch).toBe("number");
  });

  it.each(["0", "-1", "1.5", "1e3", "12abc", " 7", "lots", "99999999999999999999"])(
    "refuses maxBatch %j from the environment",
    async (value) => {
      expect(await problemsOf({ env: { ...REQUIRED_ENV, CHARTER_MAX_BATCH: value } })).toEqual([
        "maxBatch must be a positive integer",
      ]);
    },
  );

  it("reports every problem at once: unknown key, bad number, bad log level, missing catalog and policy", async () => {
    const file = configFile("colour: blue\nmaxBatch: lots\nlogLevel: loud\nlisten: nowhere\n");
    const problems = await problemsOf({ file, env: {} });
    expect(problems).toEqual(
      expect.arrayContaining([
        `${file}: unknown setting "colour"`,
        "maxBatch must be a positive integer",
        'catalog is required (config file key "catalog", environment CHARTER_CATALOG)',
        'policy is required (config file key "policy", environment CHARTER_POLICY)',
        "logLevel must be one of fatal, error, warn, info, debug, trace, silent",
        'listen must be host:port, got "nowhere"',
      ]),
    );
    expect(problems).toHaveLength(6);
  });

  it("names the config key and the environment variable of every missing setting", async () => {
    const problems = await problemsOf({ env: {}, overrides: { issuer: "", dataDir: "" } });
    for (const key of ["dataDir", "issuer", "catalog", "policy"] as const) {
      expect(problems).toContain(
        `${key} is required (config file key "${key}", environment ${ENV_KEYS[key]})`,
      );
    }
    expect(problems).toHaveLength(4);
  });

  it("refuses a file value of the wrong type, such as a list for a string or a string for a number", async () => {
    const file = configFile("catalog: [a, b]\npolicy: p.yaml\nreceiptTtlSeconds: true\n");
    // One line per problem, in the order the settings are declared (the docs' order).
    expect(await problemsOf({ file })).toEqual([
      'catalog is required (config file key "catalog", environment CHARTER_CATALOG)',
      "receiptTtlSeconds must be a positive integer",
    ]);
  });

  it("says which file cannot be read and why", async () => {
    const missing = join(dir, "no-such-config.yaml");
    await expect(resolveConfig({ file: missing, env: REQUIRED_ENV })).rejects.toSatisfy(
      (err: unknown) =>
        isConfigError(err) && err.message === `${missing}: cannot read config file (ENOENT)`,
    );
    await expect(resolveConfig({ file: dir, env: REQUIRED_ENV })).rejects.toThrow(
      `${dir}: cannot read config file (EISDIR)`,
    );
  });

  it.each([
    ["YAML that does not parse", "listen: [unclosed\ncatalog: x\n"],
    ["a duplicate key", "catalog: a\ncatalog: b\npolicy: p\n"],
  ])("refuses a config file with %s, naming the file and line", async (_what, text) => {
    const file = configFile(text);
    await expect(resolveConfig({ file, env: REQUIRED_ENV })).rejects.toSatisfy(
      (err: unknown) =>
        isLoadError(err) &&
        err.message.startsWith(`${file}: `) &&
        / at line 2, column 1/.test(err.message),
    );
  });

  it("refuses a config file that is not a map of settings", async () => {
    const file = configFile("- listen\n- dataDir\n");
    await expect(resolveConfig({ file, env: REQUIRED_ENV })).rejects.toSatisfy(
      (err: unknown) =>
        isConfigError(err) && err.message === `${file}: a config file must be a map of settings`,
    );
  });
});

describe("parseListen()", () => {
  it.each([
    ["127.0.0.1:50051", { host: "127.0.0.1", port: 50051 }],
    ["localhost:0", { host: "localhost", port: 0 }],
    ["[::1]:50051", { host: "::1", port: 50051 }],
    ["[::]:1", { host: "::", port: 1 }],
    ["127.0.0.1:65535", { host: "127.0.0.1", port: 65535 }],
  ])("splits %j", (listen, expected) => {
    expect(parseListen(listen)).toEqual(expected);
  });

  it.each([
    ["a port above 65535", "127.0.0.1:65536"],
    ["a port of six digits", "127.0.0.1:100000"],
    ["a negative port", "127.0.0.1:-1"],
    ["a port that is not a number", "127.0.0.1:http"],
    ["a port with trailing junk", "127.0.0.1:80x"],
    ["no port", "127.0.0.1"],
    ["an empty port", "127.0.0.1:"],
    ["no host", ":50051"],
    ["an IPv6 host without brackets", "::1:50051"],
    ["a bracketed host without a port", "[::1]"],
    ["empty brackets", "[]:80"],
    ["an empty string", ""],
  ])("refuses %s (%j)", (_what, listen) => {
    expect(parseListen(listen)).toBeUndefined();
  });
});

describe("isLoopback()", () => {
  it.each(["127.0.0.1", "127.255.0.1", "127.0.0.2", "::1", "localhost"])("accepts %j", (host) => {
    expect(isLoopback(host)).toBe(true);
  });

  it.each([
    "0.0.0.0",
    "::",
    "10.0.0.1",
    "192.168.1.1",
    "127.0.0.1.evil.com",
    "evil.127.0.0.1",
    "localhost.evil.com",
    "128.0.0.1",
    "1127.0.0.1",
    "",
  ])("refuses %j", (host) => {
    expect(isLoopback(host)).toBe(false);
  });
});

describe("tokenCacheSize", () => {
  it("accepts 0, which turns the verified-token cache off, and refuses a negative size", async () => {
    const env = { CHARTER_CATALOG: "c.yaml", CHARTER_POLICY: "p.yaml" };
    await expect(
      resolveConfig({ env: { ...env, CHARTER_TOKEN_CACHE_SIZE: "0" } }),
    ).resolves.toMatchObject({ tokenCacheSize: 0 });
    await expect(
      resolveConfig({ env: { ...env, CHARTER_TOKEN_CACHE_SIZE: "-1" } }),
    ).rejects.toThrow("tokenCacheSize must be a non-negative integer");
  });
});

describe("TLS and key-encryption settings", () => {
  const env = { CHARTER_CATALOG: "c.yaml", CHARTER_POLICY: "p.yaml" };
  it.each([
    [{ CHARTER_TLS_CERT: "c.pem" }, "tlsCert and tlsKey are set together"],
    [{ CHARTER_TLS_CLIENT_CA: "ca.pem" }, "tlsClientCa (mutual TLS) needs tlsCert and tlsKey"],
    [{ CHARTER_TLS_CLIENT_ROLES: "a=gateway" }, "tlsClientRoles needs tlsClientCa"],
    [
      {
        CHARTER_TLS_CERT: "c",
        CHARTER_TLS_KEY: "k",
        CHARTER_TLS_CLIENT_CA: "ca",
        CHARTER_TLS_CLIENT_ROLES: "gateway-1",
      },
      'tlsClientRoles: "gateway-1" is not cn=role[,role]',
    ],
    [
      {
        CHARTER_TLS_CERT: "c",
        CHARTER_TLS_KEY: "k",
        CHARTER_TLS_CLIENT_CA: "ca",
        CHARTER_TLS_CLIENT_ROLES: "a=x;a=y",
      },
      'tlsClientRoles: "a" is listed twice',
    ],
    [
      { CHARTER_TLS_SPIFFE_ROLES: "spiffe://td/a=gateway" },
      "tlsSpiffeRoles needs tlsClientCa (the CA that signs the SVIDs)",
    ],
    [{ CHARTER_KEK: "k", CHARTER_KEK_FILE: "f" }, "set one of kekFile and CHARTER_KEK, not both"],
  ])("refuses %j", async (extra, message) => {
    await expect(resolveConfig({ env: { ...env, ...extra } })).rejects.toThrow(message);
  });

  it.each([
    ["spiffe://td/a", '"spiffe://td/a" is not spiffe://trust-domain/path=role[,role]'],
    [
      "spiffe://td/a/../b=gateway",
      '"spiffe://td/a/../b=gateway": the SPIFFE ID has a . or .. path segment',
    ],
    ["spiffe://td=gateway", '"spiffe://td=gateway": a workload\'s SPIFFE ID has a path'],
    ["spiffe://td/a=x;spiffe://td/a=y", '"spiffe://td/a" is listed twice'],
  ])("refuses tlsSpiffeRoles %j", async (roles, message) => {
    const tls = { CHARTER_TLS_CERT: "c", CHARTER_TLS_KEY: "k", CHARTER_TLS_CLIENT_CA: "ca" };
    await expect(
      resolveConfig({ env: { ...env, ...tls, CHARTER_TLS_SPIFFE_ROLES: roles } }),
    ).rejects.toThrow(`tlsSpiffeRoles: ${message}`);
  });

  it("accepts a full mutual-TLS setting", async () => {
    const config = await resolveConfig({
      env: {
        ...env,
        CHARTER_TLS_CERT: "c",
        CHARTER_TLS_KEY: "k",
        CHARTER_TLS_CLIENT_CA: "ca",
        CHARTER_TLS_CLIENT_ROLES: "gateway-1=gateway; ops=admin,auditor",
      },
    });
    expect(config.tlsClientRoles).toBe("gateway-1=gateway; ops=admin,auditor");
  });
});

describe("resolveConfig() hard limits", () => {
  it("reads every limit from the environment and refuses zero where zero means nothing", async () => {
    const config = await resolveConfig({
      env: {
        ...REQUIRED_ENV,
        CHARTER_MAX_ARGUMENTS_BYTES: "1000",
        CHARTER_MAX_CONNECTIONS: "7",
        CHARTER_TOKEN_CACHE_BYTES: "0",
      },
    });
    expect(config).toMatchObject({
      maxArgumentsBytes: 1000,
      maxConnections: 7,
      tokenCacheBytes: 0,
    });
    await expect(
      resolveConfig({ env: { ...REQUIRED_ENV, CHARTER_MAX_ARGUMENTS_DEPTH: "0" } }),
    ).rejects.toThrow(/maxArgumentsDepth must be a positive integer/);
    await expect(
      resolveConfig({ env: { ...REQUIRED_ENV, CHARTER_MAX_TOKEN_BYTES: "999999" } }),
    ).rejects.toThrow(/maxTokenBytes must be at most 262144/);
  });
});
