/** Wakes waiters in this process when something they watch changed (other processes are found by polling). */
export interface Notifier {
  notify(): void;
  /** Resolves at the next notify(), after `ms`, or when `signal` aborts, whichever is first. */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
}

export function createNotifier(): Notifier {
  let waiters: (() => void)[] = [];
  return {
    notify() {
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    },
    wait(ms, signal) {
      return new Promise<void>((resolve) => {
        if (signal?.aborted) {
          resolve();
          return;
        }
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          waiters = waiters.filter((w) => w !== done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        waiters.push(done);
        signal?.addEventListener("abort", done, { once: true });
      });
    },
  };
}
