import { createRequire } from "node:module";
import { resolve } from "node:path";
import { Worker } from "node:worker_threads";

/**
 * Moves the WAL's pages into the database file on a thread of its own, so that the event loop
 * never runs a checkpoint (SQLite's automatic one runs inside a COMMIT and syncs the WAL and the
 * database file: a stall of several ms). The serving connection runs with
 * `wal_autocheckpoint = 0` and tells the checkpointer what each durable group wrote.
 */
export interface WalCheckpointer {
  /** Counts the units of a durable group; past `everyUnits` since the last checkpoint, asks for the next one. */
  wrote(units: number): void;
  /** Stops the thread once the checkpoint in progress (if any) is done; resolves when it has exited. */
  close(): Promise<void>;
}

export interface WalCheckpointerOptions {
  /** Units written between two checkpoints. Default 256: about 1100 WAL pages when groups are of one decision. */
  readonly everyUnits?: number;
  /** WAL pages past which a checkpoint that could not empty the WAL is worth a warning (again at each doubling). Default 10000. */
  readonly warnPages?: number;
  /** Called once when the thread cannot run (it failed to start or died): checkpoints are the caller's again. */
  readonly onFailure: (err: Error) => void;
  /** Where warnings go. Default: `process.emitWarning`. */
  readonly warn?: (message: string) => void;
}

/** What `PRAGMA wal_checkpoint(FULL)` answers: whether it was kept from finishing, the WAL's pages, and how many of them are in the database file. */
interface CheckpointResult {
  readonly busy: number;
  readonly log: number;
  readonly checkpointed: number;
}

type Reply = { readonly result: CheckpointResult } | { readonly error: string };

/**
 * The thread's code (CommonJS, run with `eval` and none of the process's Node flags, so that it
 * works the same from `dist/` and from the TypeScript sources under test), on a connection of its
 * own. On every "checkpoint" message: first `PRAGMA wal_checkpoint(PASSIVE)`, which moves the bulk
 * of the WAL without waiting for, or blocking, a writer or a reader; then a FULL checkpoint of the
 * tail written meanwhile (under load there always is one, and a WAL is reused from its start only
 * once a checkpoint has moved all of it), which holds the write lock while it copies and syncs
 * that tail (the group commit retries on its timer meanwhile) and waits at most `WAIT_MS` for the
 * lock and for readers of an older snapshot; with no tail it copies and syncs nothing. SQLite
 * serialises checkpoints across connections and processes, so a checkpointer per process is
 * safe; a failed or busy checkpoint only leaves the WAL longer.
 */
const WAIT_MS = 100;
const THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.sqlite);
const db = new Database(workerData.file, { fileMustExist: true, timeout: ${WAIT_MS} });
const passive = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
const full = db.prepare("PRAGMA wal_checkpoint(FULL)");
parentPort.on("message", (message) => {
  if (message === "close") {
    db.close();
    parentPort.close();
    return;
  }
  try {
    passive.get();
    parentPort.postMessage({ result: full.get() });
  } catch (err) {
    parentPort.postMessage({ error: String(err.message || err.code || err) });
  }
});
`;

const SQLITE_MODULE = createRequire(import.meta.url).resolve("better-sqlite3");

/**
 * A checkpointer for the database `file` (on disk, WAL mode). The thread starts at the first
 * checkpoint asked for (a short-lived CLI command never starts one); at most one checkpoint is
 * in flight. When readers keep the WAL from being emptied it grows until they are done; a
 * warning names its size each time it doubles past `warnPages`.
 */
export function startWalCheckpointer(
  file: string,
  options: WalCheckpointerOptions,
): WalCheckpointer {
  const everyUnits = options.everyUnits ?? 256;
  const warnPages = options.warnPages ?? 10_000;
  const warn =
    options.warn ??
    ((message: string) => process.emitWarning(message, { code: "CHARTER_WAL_CHECKPOINT" }));
  let worker: Worker | undefined;
  let exited: Promise<void> = Promise.resolve();
  let units = 0;
  let inFlight = false;
  let stopped = false;
  let warnAt = warnPages;

  const fail = (cause: unknown) => {
    if (stopped) return;
    stopped = true;
    // An error thrown in the thread arrives structured-cloned: a SqliteError as a bare { code }.
    const err =
      cause instanceof Error && cause.message !== "" ? cause : new Error(JSON.stringify(cause));
    warn(
      `${file}: the WAL checkpointer thread failed (${err.message}); SQLite checkpoints on the serving connection instead`,
    );
    options.onFailure(err);
  };

  const answered = (reply: Reply) => {
    inFlight = false;
    if ("error" in reply) {
      warn(
        `${file}: a WAL checkpoint failed (${reply.error}); the next one is tried after ${everyUnits} more units`,
      );
      return;
    }
    const { log } = reply.result;
    if (log < warnPages) warnAt = warnPages;
    else if (log >= warnAt && reply.result.checkpointed < log) {
      warn(
        `${file}: the WAL holds ${log} pages that a checkpoint could not all move (a reader, perhaps another process, still needs them); it is emptied once they are done`,
      );
      warnAt = log * 2;
    }
  };

  const start = (): Worker => {
    const w = new Worker(THREAD, {
      eval: true,
      execArgv: [],
      workerData: { sqlite: SQLITE_MODULE, file: resolve(file) },
    });
    w.on("message", answered);
    w.on("error", fail);
    exited = new Promise((done) =>
      w.once("exit", (code) => {
        fail(new Error(`the thread exited with code ${code}`));
        done();
      }),
    );
    return w;
  };

  return {
    wrote(n) {
      units += n;
      if (stopped || inFlight || units < everyUnits) return;
      units = 0;
      inFlight = true;
      try {
        worker ??= start();
        worker.postMessage("checkpoint");
      } catch (err) {
        fail(err);
      }
    },
    async close() {
      const wasRunning = !stopped;
      stopped = true;
      if (worker !== undefined && wasRunning) worker.postMessage("close");
      await exited;
    },
  };
}
