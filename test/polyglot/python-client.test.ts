// The Python example (examples/python) against a real Charter: stubs generated from proto/ with
// protoc, then issue -> catalog -> three verdicts -> receipt verified offline, all from Python.
// Missing tools FAIL this file (they never skip it): `npm test` first runs
// scripts/provision-test-toolchain.sh, which installs them from Debian packages when it can.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PYTHON = "/usr/bin/python3";
const GENERATE = join(ROOT, "examples/python/generate.sh");
const EXAMPLE = join(ROOT, "examples/python/charter_example.py");
const PLUGIN = "/usr/bin/grpc_python_plugin";
const STEPS = join(ROOT, "test/polyglot/python_steps.py");
/** A python or protoc run is killed after this; a test runs at most two of them. */
const RUN_TIMEOUT_MS = 30_000;
const TEST_TIMEOUT_MS = 2 * RUN_TIMEOUT_MS + 5_000;

interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command without a shell, collecting its output; a command that cannot start is code null. */
function run(command: string, args: readonly string[], timeoutMs = RUN_TIMEOUT_MS): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: timeoutMs,
      killSignal: "SIGKILL",
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", (error) =>
      resolve({ code: null, signal: null, stdout, stderr: `${stderr}${error.message}` }),
    );
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const describeRun = (r: Run) =>
  `exit ${r.code ?? "none"}${r.signal ? ` (signal ${r.signal})` : ""}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`;

/** What is missing to run the Python client, each with the Debian package that provides it. */
async function missingToolchain(): Promise<string[]> {
  const missing: string[] = [];
  if (!existsSync(PYTHON)) {
    missing.push(
      `${PYTHON} (python3)`,
      "grpc (python3-grpcio)",
      "google.protobuf (python3-protobuf)",
      "cryptography (python3-cryptography)",
    );
  } else {
    const probe = await run(PYTHON, [
      "-c",
      [
        "import importlib",
        "for module, package in (('grpc', 'python3-grpcio'), ('google.protobuf', 'python3-protobuf'), ('cryptography', 'python3-cryptography')):",
        "    try:",
        "        importlib.import_module(module)",
        "    except ImportError:",
        "        print(f'{module} for /usr/bin/python3 ({package})')",
      ].join("\n"),
    ]);
    if (probe.code !== 0) missing.push(`a working ${PYTHON} (python3): ${describeRun(probe)}`);
    missing.push(...probe.stdout.split("\n").filter((line) => line.trim() !== ""));
  }
  const protoc = await run("protoc", ["--version"]);
  if (protoc.code !== 0) missing.push("protoc (protobuf-compiler)");
  if (!existsSync(PLUGIN)) missing.push(`${PLUGIN} (protobuf-compiler-grpc)`);
  return missing;
}

let toolchain: Promise<string[]> | undefined;
/** Throws, naming what is missing and what installs it, unless the whole toolchain is present. */
async function requireToolchain(): Promise<void> {
  toolchain ??= missingToolchain();
  const missing = await toolchain;
  if (missing.length > 0) {
    throw new Error(
      `the Python client test needs: ${missing.join(", ")}. Install them with ` +
        "`apt-get update && apt-get install -y python3-grpcio python3-protobuf python3-cryptography protobuf-compiler protobuf-compiler-grpc` " +
        "(`npm test` runs scripts/provision-test-toolchain.sh, which does that as root).",
    );
  }
}

let charter: TestCharter | undefined;
let work: string;
let stubs: Promise<string> | undefined;

/** Generates the stubs once, into this file's temp dir. */
function generatedStubs(): Promise<string> {
  stubs ??= (async () => {
    await requireToolchain();
    const out = join(work, "stubs");
    const generated = await run("bash", [GENERATE, out]);
    if (generated.code !== 0)
      throw new Error(`examples/python/generate.sh failed: ${describeRun(generated)}`);
    return out;
  })();
  return stubs;
}

async function runExample(...extra: string[]): Promise<Run> {
  const dir = await generatedStubs();
  if (!charter) throw new Error("the test Charter server did not start");
  const { issuer, audience } = charter.config;
  return run(PYTHON, [
    EXAMPLE,
    "--address",
    `127.0.0.1:${charter.server.port}`,
    "--stubs",
    dir,
    "--issuer",
    issuer,
    "--audience",
    audience,
    ...extra,
  ]);
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "charter-python-"));
  charter = await startTestCharter();
});
afterAll(async () => {
  await charter?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the Python client from generated stubs", () => {
  it(
    "finds /usr/bin/python3 with grpc, protobuf and cryptography, protoc and the gRPC Python plugin",
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      await requireToolchain();
    },
  );

  it(
    "issues a grant, lists the catalog, gets three verdicts and verifies the receipt offline",
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const result = await runExample();
      expect(result.code, describeRun(result)).toBe(0);
      const out = result.stdout;
      expect(out).toMatch(/^grant \S+: profile owner-assistant,/m);
      expect(out).toMatch(/^catalog \(\d+ tools, openai_chat\): .*\bissue_refund\b/m);
      expect(out).not.toMatch(/^catalog .*\brun_shell\b/m);
      expect(out).toContain(
        "verdict call-allow issue_refund: DECISION_ALLOW reason=- requirement=-\n",
      );
      expect(out).toContain(
        "verdict call-deny run_shell: DECISION_DENY reason=EXPLICIT_DENY requirement=-\n",
      );
      expect(out).toMatch(
        /^verdict call-approval issue_refund: DECISION_REQUIRE_APPROVAL reason=\S+ requirement=manager$/m,
      );
      expect(out).toMatch(
        /^receipt verified offline: kid \S+, decision dec_\S+, args_digest [0-9a-f]{12}\.\.\., expires in \d+s$/m,
      );
      expect(out.trimEnd().split("\n").at(-1)).toBe("python example: ok");
      expect(result.stderr).toBe("");
    },
  );

  it(
    "passes a step and a target: a retried step is the same decision, changed arguments STEP_CONFLICT, kind 42 UNKNOWN_TARGET_KIND",
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const dir = await generatedStubs();
      const result = await run(PYTHON, [
        STEPS,
        "--address",
        `127.0.0.1:${charter?.server.port ?? 0}`,
        "--stubs",
        dir,
      ]);
      expect(result.code, describeRun(result)).toBe(0);
      expect(result.stdout).toContain("changed arguments: STEP_CONFLICT\n");
      expect(result.stdout.trimEnd().split("\n").at(-1)).toBe("python steps: ok");
    },
  );

  it(
    "refuses a receipt whose payload was altered after signing",
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const result = await runExample("--tamper-receipt");
      expect(result.code, describeRun(result)).toBe(1);
      // Everything up to the local check went as before; only the signature check refuses it.
      expect(result.stdout).toContain("verdict call-allow issue_refund: DECISION_ALLOW");
      expect(result.stdout).toContain("tampered with the receipt");
      expect(result.stdout).not.toContain("python example: ok");
      expect(result.stdout).not.toContain("receipt verified offline");
      expect(result.stderr).toMatch(
        /^python example: FAILED: receipt signature does not verify against JWKS key \S+: the receipt was altered or not signed by Charter$/m,
      );
    },
  );
});
