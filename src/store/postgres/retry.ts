import { sqlState } from "./errors.js";

/** How often and how patiently a transaction is run again after a serialization failure. */
export interface RetryOptions {
  /** Runs in all, the first included. */
  readonly attempts: number;
  /** The first back-off ceiling; it doubles per retry up to `maxDelayMs` (full jitter). */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 8, baseDelayMs: 2, maxDelayMs: 100 };

/** SQLSTATEs that mean "run it again": serialization_failure and deadlock_detected. */
const RETRYABLE: ReadonlySet<string> = new Set(["40001", "40P01"]);

/** True for a failure after which the whole transaction may simply run again. */
export function isRetryable(err: unknown): boolean {
  const state = sqlState(err);
  return state !== undefined && RETRYABLE.has(state);
}

/**
 * Runs `work` and, while it fails with a serialization failure or a deadlock, runs it again after
 * a jittered, doubling pause — at most `attempts` runs, then the last failure is thrown. Safe only
 * because every store operation is idempotent (a decision is keyed by its id, a grant by its id
 * and content) and rolled back whole when it fails. Any other failure is thrown at once.
 */
export async function retrying<T>(
  work: () => Promise<T>,
  options: RetryOptions = DEFAULT_RETRY,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= options.attempts || !isRetryable(err)) throw err;
      const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
      await new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
    }
  }
}
