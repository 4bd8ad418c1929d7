import cluster, { type Worker } from "node:cluster";
import type { Logger } from "pino";
import type { CharterConfig } from "../config/config.js";
import { createAppContext } from "./context.js";
import { startMetricsEndpoint, type MetricsEndpoint } from "./metrics-endpoint.js";
import { WORKER_SLOT_ENV, isWorkerMessage, type PrimaryMessage } from "./worker-messages.js";

/** What the primary answers: where the workers listen, and how to stop them all. */
export interface RunningCluster {
  readonly address: string;
  /** Where the primary serves every worker's metrics summed, when `metricsListen` is set. */
  readonly metricsAddress?: string;
  /** The approvals inbox's URL as its worker (worker 1) first bound it, when `inboxListen` is set. */
  readonly inboxUrl?: string;
  /** Workers alive now. */
  workers(): number;
  /** Sends every worker a reload (each logs its outcome). */
  reload(): void;
  /** Graceful stop of every worker (each drains its calls for up to `graceMs`); resolves when all have exited. */
  stop(graceMs?: number): Promise<void>;
}

/** A worker that exits this soon after it started counts towards the back-off; one that ran longer resets it. */
const STABLE_AFTER_MS = 30_000;
const FIRST_RESTART_MS = 100;
const MAX_RESTART_MS = 10_000;

/** The delay before restarting a worker that has crashed `crashes` times in a row: 100 ms, doubling, at most 10 s. */
export function restartDelayMs(crashes: number): number {
  return Math.min(MAX_RESTART_MS, FIRST_RESTART_MS * 2 ** Math.max(0, crashes - 1));
}

/** Thrown when the first worker cannot start: the exit code it gave (78 for a configuration problem). */
export class WorkerStartError extends Error {
  constructor(readonly exitCode: number) {
    super(`the first worker exited with ${exitCode} before listening`);
  }
}

/**
 * The primary of `charter serve --workers N` (node:cluster): it never serves. It first opens the
 * store once — migrations, the data dir's checks (a ConfigError here is exit 78 as without
 * workers) and the first signing key — and closes it; then it forks the workers and waits for
 * each to listen. Every worker listens on the configured address itself; cluster's primary
 * owns the one listening socket per address (with port 0: the port the first worker got, shared
 * while any worker lives) and hands each connection to a worker in turn, so one HTTP/2
 * connection stays on the worker that got it. A worker that exits while the primary is not stopping is logged and
 * restarted with a back-off. With `metricsListen`, the primary serves the workers' metrics summed
 * (prom-client's AggregatorRegistry asks each worker over IPC at every scrape). Messages relay the approval feed between workers, so a watch on one
 * sees an approval decided through another at once.
 */
export async function startCluster(config: CharterConfig, log: Logger): Promise<RunningCluster> {
  await (
    await createAppContext(config, {
      tokenCacheSize: 1,
      createStore: config.createStore === "if-missing",
    })
  ).close();
  const metrics: MetricsEndpoint | undefined =
    config.metricsListen === ""
      ? undefined
      : await startMetricsEndpoint(
          config,
          (await import("../telemetry/metrics.js")).clusterMetricsSource(),
          log,
        );
  const slots = new Map<number, Worker>();
  let stopping = false;

  const crashes = new Map<number, number>();
  /** Forks the worker of `slot`; resolves when it listens. A first start that fails rejects; a restart that fails is retried. */
  const fork = (
    slot: number,
    restart: boolean,
  ): Promise<{ address: string; port: number; inboxUrl?: string }> => {
    const worker = cluster.fork({ [WORKER_SLOT_ENV]: String(slot) });
    slots.set(slot, worker);
    const started = Date.now();
    return new Promise((resolve, reject) => {
      let listening = false;
      worker.on("message", (message: unknown) => {
        if (!isWorkerMessage(message)) return;
        if (message.charter === "listening") {
          listening = true;
          resolve({
            address: message.address,
            port: message.port,
            ...(message.inboxUrl === undefined ? {} : { inboxUrl: message.inboxUrl }),
          });
        } else
          for (const [other, w] of slots)
            if (other !== slot) send(w, { charter: "approvals-changed" });
      });
      worker.once("exit", (code, signal) => {
        if (slots.get(slot) === worker) slots.delete(slot);
        if (!listening && !restart)
          reject(new WorkerStartError(Number.isInteger(code) ? code : 70)); // code is null after a signal, whatever the types say;
        if (stopping || (!listening && !restart)) return;
        const crashed = Date.now() - started > STABLE_AFTER_MS ? 1 : (crashes.get(slot) ?? 0) + 1;
        crashes.set(slot, crashed);
        const delay = restartDelayMs(crashed);
        log.error(
          { worker: slot, pid: worker.process.pid, code, signal, restartInMs: delay },
          "worker exited; restarting it",
        );
        setTimeout(() => {
          if (!stopping)
            void fork(slot, true).then(() => log.info({ worker: slot }, "worker restarted"));
        }, delay).unref();
      });
    });
  };

  const stopAll = async (graceMs: number): Promise<void> => {
    stopping = true;
    const exits = [...slots.values()].map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.isDead()) {
            resolve();
            return;
          }
          w.once("exit", () => resolve());
          send(w, { charter: "stop", graceMs });
          // A worker that does not finish its drain in time (plus a margin) is killed.
          setTimeout(() => w.process.kill("SIGKILL"), graceMs + 5000).unref();
        }),
    );
    await Promise.all(exits);
    await metrics?.close();
  };

  let first: { address: string; port: number; inboxUrl?: string };
  try {
    [first] = (await Promise.all(
      Array.from({ length: config.workers }, (_, i) => fork(i + 1, false)),
    )) as [{ address: string; port: number; inboxUrl?: string }];
  } catch (err) {
    await stopAll(1000);
    throw err;
  }
  log.info({ address: first.address, workers: config.workers }, "charter workers serving");
  return {
    address: first.address,
    ...(metrics ? { metricsAddress: metrics.address } : {}),
    ...(first.inboxUrl === undefined ? {} : { inboxUrl: first.inboxUrl }),
    workers: () => slots.size,
    reload: () => {
      for (const w of slots.values()) send(w, { charter: "reload" });
    },
    stop: (graceMs = 10_000) => stopAll(graceMs),
  };
}

/** Sends a message to a worker; one that is already gone is skipped (its exit is handled). */
function send(worker: Worker, message: PrimaryMessage): void {
  if (worker.isConnected()) worker.send(message, () => undefined);
}
