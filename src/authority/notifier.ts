/**
 * Wakes waiters in this process when something they watch changed. A waiter costs no timer and
 * no CPU while nothing changes; other processes' changes reach it through `pollForChanges`.
 */
export interface Notifier {
  notify(): void;
  /**
   * Resolves at the next notify(), or at once when one came after `since` (a `generation()`
   * read before the waiter last looked), or when `signal` aborts, whichever is first.
   */
  wait(signal?: AbortSignal, since?: number): Promise<void>;
  /** How many notify() calls there have been: read before looking, passed to wait() after. */
  generation(): number;
  /** Waiters now. */
  waiting(): number;
}

export function createNotifier(): Notifier {
  let waiters = new Set<() => void>();
  let generation = 0;
  return {
    notify() {
      generation += 1;
      const woken = waiters;
      waiters = new Set();
      for (const wake of woken) wake();
    },
    wait(signal, since) {
      return new Promise<void>((resolve) => {
        if (signal?.aborted || (since !== undefined && since !== generation)) {
          resolve();
          return;
        }
        const done = () => {
          signal?.removeEventListener("abort", done);
          waiters.delete(done);
          resolve();
        };
        waiters.add(done);
        signal?.addEventListener("abort", done, { once: true });
      });
    },
    generation: () => generation,
    waiting: () => waiters.size,
  };
}

/**
 * One look every `everyMs` at a number another process may change (the store's last approval
 * sequence), made only while someone waits on `feed`: when it changed, the waiters are woken.
 * However many wait, it is one read per interval. Stops when `signal` aborts.
 */
export function pollForChanges(
  feed: Notifier,
  read: () => Promise<number>,
  everyMs: number,
  signal: AbortSignal,
): void {
  let seen: number | undefined;
  let reading = false;
  const timer = setInterval(() => {
    if (reading || feed.waiting() === 0) return;
    reading = true;
    read()
      .then((now) => {
        if (now !== seen) {
          seen = now;
          feed.notify();
        }
      })
      .catch(() => undefined)
      .finally(() => {
        reading = false;
      });
  }, everyMs);
  timer.unref();
  signal.addEventListener("abort", () => clearInterval(timer), { once: true });
}
