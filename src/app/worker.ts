import cluster from "node:cluster";
import type { Logger } from "pino";
import { createNotifier, type Notifier } from "../authority/index.js";
import type { CharterConfig } from "../config/config.js";
import { startCharter, type RunningCharter } from "./charter.js";
import { WORKER_SLOT_ENV, isPrimaryMessage, type WorkerMessage } from "./worker-messages.js";

/** True in a process the cluster primary forked. */
export const isClusterWorker = (): boolean => cluster.isWorker;

/**
 * A cluster worker of `charter serve --workers N`: the same server as a single process (its own
 * store connection, key ring, caches and connection caps), on the configured address (cluster shares the listening socket).
 * It tells the primary when it listens; it stops (draining its calls) and reloads when the
 * primary says so, and relays approval changes so watchers on other workers wake at once.
 * Resolves once stopped; the IPC channel is then closed, so the process exits by itself.
 */
export async function serveAsWorker(config: CharterConfig, log: Logger): Promise<void> {
  const slot = Number(process.env[WORKER_SLOT_ENV] ?? cluster.worker?.id ?? 0);
  const workerLog = log.child({ worker: slot, pid: process.pid });
  const local = createNotifier();
  const tell = (message: WorkerMessage) => {
    if (process.connected) process.send?.(message);
  };
  const approvalFeed: Notifier = {
    notify() {
      local.notify();
      tell({ charter: "approvals-changed" });
    },
    wait: (signal, since) => local.wait(signal, since),
    generation: () => local.generation(),
    waiting: () => local.waiting(),
  };
  const running = await startCharter(config, { log: workerLog, worker: slot, approvalFeed }).catch(
    (err: unknown) => {
      // The IPC channel would keep a worker that failed to start alive: close it, so the process exits with the CLI's code.
      cluster.worker?.disconnect();
      throw err;
    },
  );
  tell({
    charter: "listening",
    address: running.address,
    port: running.port,
    ...(running.inboxUrl === undefined ? {} : { inboxUrl: running.inboxUrl }),
  });
  await new Promise<void>((resolve) => {
    let stopped: Promise<void> | undefined;
    const stop = (graceMs?: number) => {
      stopped ??= running
        .stop(graceMs)
        .catch((err: unknown) => workerLog.error({ err }, "shutdown failed"))
        .finally(() => {
          process.off("message", onMessage);
          cluster.worker?.disconnect();
          resolve();
        });
    };
    const onMessage = (message: unknown) => {
      if (!isPrimaryMessage(message)) return;
      if (message.charter === "stop") stop(message.graceMs);
      else if (message.charter === "reload") reload(running);
      else local.notify();
    };
    process.on("message", onMessage);
    // A terminal's Ctrl-C (or a signal to the process group) reaches the workers too: stop as the primary would have said.
    process.once("SIGTERM", () => stop());
    process.once("SIGINT", () => stop());
    // The primary relays SIGHUP as a message; the signal itself must not kill a worker.
    process.on("SIGHUP", () => undefined);
  });
}

function reload(running: RunningCharter): void {
  running.reload().catch(() => undefined);
}
