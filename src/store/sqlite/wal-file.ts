import { closeSync, fdatasync, fdatasyncSync, openSync } from "node:fs";

/**
 * Makes what the committed transactions wrote durable: `flush(done)` calls `done` (with an error
 * when the flush failed) once it is on disk, without blocking the event loop; `flushSync` blocks.
 */
export interface DurableFile {
  flush(done: (err: Error | null) => void): void;
  flushSync(): void;
  /** Once no flush is in flight. */
  close(): void;
}

/**
 * The WAL file of a database on disk (opened with `synchronous = NORMAL`, so SQLite does not flush
 * in the commit), flushed with `fdatasync` on libuv's thread pool. The file is opened at the first
 * flush (SQLite creates it with the first write).
 */
export function walFile(path: string): DurableFile {
  let fd: number | undefined;
  let inFlight = 0;
  let closing = false;
  const release = () => {
    if (closing && inFlight === 0 && fd !== undefined) {
      closeSync(fd);
      fd = undefined;
    }
  };
  return {
    flush(done) {
      fd ??= openSync(path, "r");
      inFlight += 1;
      fdatasync(fd, (err) => {
        inFlight -= 1;
        release();
        done(err);
      });
    },
    flushSync() {
      fd ??= openSync(path, "r");
      fdatasyncSync(fd);
    },
    close() {
      closing = true;
      release();
    },
  };
}
