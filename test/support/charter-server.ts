import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino, type Logger } from "pino";
import { startCharter, type RunningCharter } from "../../src/app/charter.js";
import { createCharterClients, type CharterClients } from "../../src/client/index.js";
import { DEFAULTS, type CharterConfig } from "../../src/config/config.js";

export const FIXTURES = new URL("../../fixtures/", import.meta.url).pathname;

/** A real Charter on an ephemeral loopback port with a temp data dir, and clients for it. */
export interface TestCharter {
  readonly server: RunningCharter;
  readonly clients: CharterClients;
  readonly config: CharterConfig;
  readonly dataDir: string;
  /** Stops the server; with `keepData`, the data dir survives for a restart. */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

export interface TestCharterOptions {
  readonly config?: Partial<CharterConfig>;
  readonly dataDir?: string;
  /** A clock in Unix seconds; the real one by default. */
  readonly now?: () => number;
  /** The server's logger; a silent one by default. */
  readonly log?: Logger;
}

export async function startTestCharter(options: TestCharterOptions = {}): Promise<TestCharter> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "charter-test-"));
  let config: CharterConfig = {
    ...DEFAULTS,
    listen: "127.0.0.1:0",
    dataDir,
    catalog: join(FIXTURES, "catalog.yaml"),
    policy: join(FIXTURES, "policy.yaml"),
    logLevel: "silent",
    ...options.config,
  };
  // Most tests call without a key, as the quick start does: protected mode wherever it is allowed,
  // unless the test says otherwise; and a fresh data dir gets a new store.
  if (config.auth === undefined && isLoopbackLiteral(config.listen) && config.tlsClientCa === "")
    config = { ...config, auth: "none" };
  config = { ...config, createStore: config.createStore ?? "if-missing" };
  const server = await startCharter(config, {
    log: options.log ?? pino({ level: "silent" }),
    ...(options.now ? { now: options.now } : {}),
  });
  const clients = createCharterClients({ address: `127.0.0.1:${server.port}` });
  return {
    server,
    clients,
    config,
    dataDir,
    async stop(stopOptions) {
      clients.close();
      await server.stop(2_000);
      if (!stopOptions?.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A test Charter serving a private copy of the demo policy, which the test may rewrite and reload. */
export interface EditablePolicyCharter {
  readonly charter: TestCharter;
  /** The copy's path. */
  readonly policy: string;
  /** Stops the server and removes the copy. */
  stop(): Promise<void>;
}

export async function startWithEditablePolicy(prefix: string): Promise<EditablePolicyCharter> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const policy = join(dir, "policy.yaml");
  copyFileSync(join(FIXTURES, "policy.yaml"), policy);
  const charter = await startTestCharter({ config: { policy } });
  return {
    charter,
    policy,
    async stop() {
      await charter.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A listen address that is a loopback literal (`127.0.0.1:0`, `[::1]:0`, `localhost:0`). */
function isLoopbackLiteral(listen: string): boolean {
  return /^(127\.\d+\.\d+\.\d+|\[::1\]|localhost):\d+$/.test(listen);
}
