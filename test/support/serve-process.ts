import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

// `charter serve` as its own process, the way an operator runs it: the built CLI (dist/, which
// the global setup keeps current) with the demo configuration, on an ephemeral loopback port.
// One helper for every test that needs a real process: signals, restarts, workers, crashes.

const ROOT = new URL("../../", import.meta.url).pathname;
export const CHARTER_BIN = join(ROOT, "dist", "cli", "bin.js");

export interface ServeOptions {
  /** The configuration file (`--config`); default the demo's, fixtures/charter.yaml. */
  readonly config?: string;
  /** The data dir (`--data-dir`). */
  readonly dataDir: string;
  /** Flags after the defaults (`--config … --listen 127.0.0.1:0 --data-dir …`). */
  readonly args?: readonly string[];
  /** Added to this process's environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** Whether stdout (the JSON log) is kept; off, it is discarded. */
  readonly keepStdout?: boolean;
}

export interface ServedProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** The address printed on stderr (`charter listening on <address>`). */
  readonly address: string;
  /** What stdout printed so far (empty unless `keepStdout`). */
  stdout(): string;
  /** What stderr printed so far. */
  stderr(): string;
  /** The JSON log lines printed so far (needs `keepStdout`). */
  lines(): Record<string, unknown>[];
  /** The exit, with the time it was seen. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  readonly signal: (name: NodeJS.Signals) => void;
  /** SIGKILL, then the exit. */
  readonly kill: () => Promise<void>;
}

/** `charter serve` ended before it listened (a refused start): how, and what it printed. */
export class ServeExited extends Error {
  constructor(
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(`charter serve exited with ${String(code ?? signal)}: ${stderr}`);
  }
}

/**
 * Starts `charter serve` and answers once it listens; rejects with `ServeExited` if it exits
 * first, or with an Error if it has not listened within `timeoutMs`.
 */
export async function serveProcess(
  options: ServeOptions,
  timeoutMs = 20_000,
): Promise<ServedProcess> {
  if (!existsSync(CHARTER_BIN)) throw new Error("dist/ is missing: build it first (npm run build)");
  const child = spawn(
    process.execPath,
    [
      CHARTER_BIN,
      "serve",
      "--config",
      options.config ?? "fixtures/charter.yaml",
      "--listen",
      "127.0.0.1:0",
      "--data-dir",
      options.dataDir,
      ...(options.args ?? []),
    ],
    {
      cwd: ROOT,
      stdio: ["ignore", options.keepStdout === true ? "pipe" : "ignore", "pipe"],
      env: { ...process.env, ...options.env },
    },
  );
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>(
    (resolve) => child.on("exit", (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`charter serve did not listen within ${timeoutMs} ms: ${err}`));
    }, timeoutMs);
    const look = () => {
      const m = /charter listening on (\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    };
    child.stderr?.on("data", look);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new ServeExited(code, signal, out, err));
    });
  });
  return {
    child,
    pid: child.pid as number,
    address,
    stdout: () => out,
    stderr: () => err,
    lines: () =>
      out
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    exited,
    signal: (name) => child.kill(name),
    kill: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}
