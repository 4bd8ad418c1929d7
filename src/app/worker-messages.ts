/** The worker's slot (1..N, kept across restarts), for its log lines. */
export const WORKER_SLOT_ENV = "CHARTER_WORKER_SLOT";

/** What the primary tells a worker. */
export type PrimaryMessage =
  | { readonly charter: "stop"; readonly graceMs: number }
  | { readonly charter: "reload" }
  | { readonly charter: "approvals-changed" };

/** What a worker tells the primary. */
export type WorkerMessage =
  | {
      readonly charter: "listening";
      readonly address: string;
      readonly port: number;
      /** The inbox's URL, from the worker that serves it. */
      readonly inboxUrl?: string;
    }
  | { readonly charter: "approvals-changed" };

const PRIMARY_KINDS = new Set(["stop", "reload", "approvals-changed"]);
const WORKER_KINDS = new Set(["listening", "approvals-changed"]);

/** Charter's own messages among whatever else travels on the IPC channel (prom-client's metrics requests, cluster's internals). */
export function isPrimaryMessage(message: unknown): message is PrimaryMessage {
  return (
    typeof message === "object" &&
    message !== null &&
    PRIMARY_KINDS.has((message as { charter?: unknown }).charter as string)
  );
}

export function isWorkerMessage(message: unknown): message is WorkerMessage {
  return (
    typeof message === "object" &&
    message !== null &&
    WORKER_KINDS.has((message as { charter?: unknown }).charter as string)
  );
}
