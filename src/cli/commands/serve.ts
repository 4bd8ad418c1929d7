import { pino, type Logger } from "pino";
import { startCharter } from "../../app/charter.js";
import { WorkerStartError, startCluster } from "../../app/cluster.js";
import { isClusterWorker, serveAsWorker } from "../../app/worker.js";
import type { CharterConfig } from "../../config/config.js";
import type { CliIo } from "../io.js";
import { SERVE_CONFIG_FLAGS, configFrom, parse } from "../options.js";

/** Flags of `charter serve`: the configuration flags, `--workers` among them, and `--init`. */
const SERVE_FLAGS = { ...SERVE_CONFIG_FLAGS, init: { type: "boolean" } } as const;

/**
 * `charter serve`: runs the server until SIGTERM or SIGINT (graceful: in-flight calls finish,
 * then the store closes). SIGHUP reloads catalog and policy; a bad reload keeps the old pair.
 * With `--workers N` (default: one per core) a primary forks N server processes (node:cluster)
 * and relays the signals to them; `--workers 1` is one process and no primary.
 */
export async function serveCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(args, SERVE_FLAGS);
  const { init, ...configFlags } = values;
  const configured = await configFrom(configFlags, io.env);
  // --init: a missing store is created (each worker parses the same arguments).
  const config: CharterConfig =
    init === true ? { ...configured, createStore: "if-missing" } : configured;
  // One line per call, written off the call's path: buffered and written asynchronously, flushed
  // synchronously when the process exits (pino registers that) and after a graceful stop.
  const log = pino(
    { level: config.logLevel, base: { service: "charter" } },
    pino.destination({ dest: 1, sync: false }),
  );
  if (isClusterWorker()) {
    await serveAsWorker(config, log);
    return 0;
  }
  return config.workers === 1 ? serveOne(config, log, io) : servePrimary(config, log, io);
}

/** One process: the server itself handles the signals. */
async function serveOne(config: CharterConfig, log: Logger, io: CliIo): Promise<number> {
  const running = await startCharter(config, { log });
  io.err(`charter listening on ${running.address}`);
  if (running.inboxUrl !== undefined) io.err(`charter inbox listening on ${running.inboxUrl}`);
  await untilStopped(
    log,
    () => void running.reload().catch(() => undefined),
    () => running.stop(),
  );
  return 0;
}

/** The cluster primary: forks the workers, relays SIGHUP, stops them all on SIGTERM or SIGINT, then says `charter stopped` once. */
async function servePrimary(config: CharterConfig, log: Logger, io: CliIo): Promise<number> {
  let running;
  try {
    running = await startCluster(config, log);
  } catch (err) {
    // The worker printed why on its own stderr; answer its exit code (78 for a configuration problem).
    if (err instanceof WorkerStartError) return err.exitCode;
    throw err;
  }
  io.err(`charter listening on ${running.address} (${config.workers} workers)`);
  if (running.inboxUrl !== undefined)
    io.err(`charter inbox listening on ${running.inboxUrl} (worker 1)`);
  await untilStopped(
    log,
    () => running.reload(),
    () => running.stop(),
  );
  log.info("charter stopped");
  return 0;
}

/** Waits for SIGTERM or SIGINT, reloading on SIGHUP meanwhile; then stops (a failed stop is logged). */
function untilStopped(log: Logger, reload: () => void, stop: () => Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      log.info({ signal }, "shutting down");
      process.off("SIGHUP", reload);
      stop().then(
        () => {
          log.flush();
          resolve();
        },
        (err: unknown) => {
          log.error({ err }, "shutdown failed");
          log.flush();
          resolve();
        },
      );
    };
    process.once("SIGTERM", () => onSignal("SIGTERM"));
    process.once("SIGINT", () => onSignal("SIGINT"));
    process.on("SIGHUP", reload);
  });
}
