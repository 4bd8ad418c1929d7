import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIENT_SETTINGS, DEFAULTS, SETTING_NAMES } from "../../src/config/config.js";

// `charter config` run as the built CLI, in a process of its own with only the environment given.

const ROOT = new URL("../../", import.meta.url).pathname;
const BIN = join(ROOT, "dist", "cli", "bin.js");
const dir = mkdtempSync(join(tmpdir(), "charter-config-cmd-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(() => {
  expect(existsSync(BIN), "dist/ is missing: run `npm run build` first").toBe(true);
});

interface Run {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

function charter(args: readonly string[], env: Record<string, string> = {}, cwd = dir): Run {
  const r = spawnSync(process.execPath, [BIN, "config", ...args], {
    cwd,
    env: { PATH: process.env["PATH"] ?? "", ...env },
    encoding: "utf8",
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

interface Shown {
  readonly value: unknown;
  readonly source: string;
  readonly from?: string;
}

function json(args: readonly string[], env: Record<string, string> = {}) {
  const r = charter(["--json", ...args], env);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as {
    file: { path: string; namedBy: string } | null;
    settings: Record<string, Shown>;
    client: Record<string, Shown>;
  };
}

let files = 0;
function configFile(text: string): string {
  const file = join(dir, `charter-${++files}.yaml`);
  writeFileSync(file, text);
  return file;
}

const REQUIRED = { CHARTER_CATALOG: "c.yaml", CHARTER_POLICY: "p.yaml" };

describe("charter config", () => {
  it("shows each value from the flag over the environment over the file over the default, with its source", () => {
    const file = configFile(
      "catalog: file-catalog.yaml\npolicy: p.yaml\nlisten: 127.0.0.1:1\nmaxBatch: 8\nissuer: file-issuer\n",
    );
    const { file: named, settings } = json(["--config", file, "--listen", "127.0.0.1:3"], {
      CHARTER_LISTEN: "127.0.0.1:2",
      CHARTER_MAX_BATCH: "16",
      CHARTER_LOG_LEVEL: "",
    });
    expect(named).toEqual({ path: file, namedBy: "flag" });
    expect(settings["listen"]).toEqual({ value: "127.0.0.1:3", source: "flag", from: "--listen" });
    expect(settings["maxBatch"]).toEqual({ value: 16, source: "env", from: "CHARTER_MAX_BATCH" });
    expect(settings["issuer"]).toEqual({ value: "file-issuer", source: "file", from: file });
    expect(settings["catalog"]).toEqual({ value: "file-catalog.yaml", source: "file", from: file });
    // An empty environment variable is ignored: the default stands.
    expect(settings["logLevel"]).toEqual({ value: DEFAULTS.logLevel, source: "default" });
    expect(settings["audience"]).toEqual({ value: "charter", source: "default" });
    expect(settings["database"]).toEqual({ value: null, source: "default" });
    expect(Object.keys(settings)).toEqual(SETTING_NAMES);
  });

  it("finds the file through CHARTER_CONFIG, and takes serve's --workers as a flag", () => {
    const file = configFile("catalog: c.yaml\npolicy: p.yaml\nworkers: 3\n");
    const viaEnv = json([], { CHARTER_CONFIG: file });
    expect(viaEnv.file).toEqual({ path: file, namedBy: "env" });
    expect(viaEnv.settings["workers"]).toEqual({ value: 3, source: "file", from: file });
    const viaFlag = json(["--workers", "2"], { CHARTER_CONFIG: file, CHARTER_WORKERS: "5" });
    expect(viaFlag.settings["workers"]).toEqual({ value: 2, source: "flag", from: "--workers" });
  });

  it("prints one line per setting with its value and source in the text form", () => {
    const r = charter(["--data-dir", "/srv/charter"], { ...REQUIRED, CHARTER_MAX_BATCH: "9" });
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split("\n");
    expect(lines[0]).toBe("config file: (none)");
    expect(lines).toHaveLength(1 + SETTING_NAMES.length + 1 + Object.keys(CLIENT_SETTINGS).length);
    expect(lines).toContainEqual(expect.stringMatching(/^server +\(none\) +default$/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^dataDir +\/srv\/charter +flag --data-dir$/),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^maxBatch +9 +env CHARTER_MAX_BATCH$/));
    expect(lines).toContainEqual(expect.stringMatching(/^catalog +c\.yaml +env CHARTER_CATALOG$/));
    expect(lines).toContainEqual(expect.stringMatching(/^maxTokenBytes +65536 +default$/));
    expect(lines).toContainEqual(expect.stringMatching(/^database +\(none\) +default$/));
  });

  it("redacts the KEK and the passwords of the database and trace URLs, in both forms", () => {
    const env = {
      ...REQUIRED,
      CHARTER_KEK: "kek-value-never-printed",
      CHARTER_DATABASE_URL: "postgres://charter:db-pass-never-printed@db:5432/charter?schema=a",
      CHARTER_TRACING_OTLP_ENDPOINT:
        "https://otel:otlp-pass-never-printed@collector:4318/v1/traces",
      CHARTER_API_KEY: "ck_env-key-never-printed",
    };
    const query = {
      ...env,
      CHARTER_DATABASE_URL: "postgres://db/charter?password=q-pass-never-printed",
    };
    for (const e of [env, query])
      for (const args of [[], ["--json"]]) {
        const r = charter(args, e);
        expect(r.code).toBe(0);
        expect(r.out).not.toMatch(/never-printed/);
        expect(r.out).toContain("REDACTED");
      }
    const { settings, client } = json(["--api-key", "ck_flag-key-never-printed"], env);
    expect(JSON.stringify(settings) + JSON.stringify(client)).not.toMatch(/never-printed/);
    expect(client["apiKey"]).toEqual({ value: "REDACTED", source: "flag", from: "--api-key" });
    expect(settings["kek"]).toEqual({ value: "REDACTED", source: "env", from: "CHARTER_KEK" });
    expect(settings["database"]?.value).toBe(
      "postgres://charter:REDACTED@db:5432/charter?schema=a",
    );
    expect(settings["tracingOtlpEndpoint"]?.value).toBe(
      "https://otel:REDACTED@collector:4318/v1/traces",
    );
    // What is not a secret is shown as given.
    expect(
      json(["--database", "sqlite:/var/lib/charter.db"], REQUIRED).settings["database"],
    ).toEqual({ value: "sqlite:/var/lib/charter.db", source: "flag", from: "--database" });
  });

  it("refuses a bad configuration with the same messages as every command, echoing no secret, exit 78", () => {
    const r = charter([], {
      ...REQUIRED,
      CHARTER_MAX_BATCH: "0",
      CHARTER_LOG_LEVEL: "loud",
      CHARTER_DATABASE_URL: "postgres://charter:db-pass-never-printed@db/charter",
    });
    expect(r.code).toBe(78);
    expect(r.out).toBe("");
    expect(r.err.trimEnd().split("\n")).toEqual([
      "charter config: logLevel must be one of fatal, error, warn, info, debug, trace, silent",
      "maxBatch must be a positive integer",
      "a postgres:// database is shared: signing keys must be encrypted at rest; set kekFile or CHARTER_KEK",
    ]);
    const inFile = configFile("catalog: c.yaml\npolicy: p.yaml\nkek: kek-value-never-printed\n");
    const refused = charter(["--config", inFile]);
    expect(refused.code).toBe(78);
    expect(refused.err).toContain(
      `${inFile}: "kek" is a secret; set CHARTER_KEK or kekFile instead`,
    );
    expect(refused.err + refused.out).not.toMatch(/never-printed/);
  });

  it("prints its usage and exits 0 for --help and -h; an unknown flag is a usage error", () => {
    for (const flag of ["--help", "-h"]) {
      const r = charter([flag]);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/^usage: charter config \[--json\]/);
    }
    const bad = charter(["--colour"], REQUIRED);
    expect(bad.code).toBe(64);
    expect(bad.err).toContain("Unknown option '--colour'");
  });

  it("ends quietly when its reader goes away (`charter config | true`), with the command's exit code", () => {
    // `true` exits without reading: every write after it is EPIPE.
    const r = spawnSync(
      "bash",
      [
        "-c",
        `"${process.execPath}" "${BIN}" config --config fixtures/charter.yaml | true; echo "exit \${PIPESTATUS[0]}"`,
      ],
      { cwd: ROOT, env: { PATH: process.env["PATH"] ?? "" }, encoding: "utf8" },
    );
    expect(r.stdout.trim()).toBe("exit 0");
    expect(r.stderr).not.toContain("EPIPE");
  });

  it("prints what docs/configuration.md shows for its example", () => {
    const page = readFileSync(join(ROOT, "docs", "configuration.md"), "utf8");
    const block = /```sh\ncharter config (.*)\n((?:# .*\n)+)```/.exec(page);
    expect(block, "docs/configuration.md has no `charter config` example").not.toBeNull();
    const [, args = "", shown = ""] = block ?? [];
    const r = charter(args.split(" "), {}, ROOT);
    expect(r.code).toBe(0);
    const lines = r.out.split("\n");
    const expected = shown
      .split("\n")
      .filter((l) => l.startsWith("# ") && l !== "# …")
      .map((l) => l.slice(2));
    expect(expected.length).toBeGreaterThan(2);
    for (const line of expected) expect(lines).toContain(line);
  });
});
