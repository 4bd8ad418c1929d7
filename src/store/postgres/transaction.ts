import type pg from "pg";
import { isStoreError } from "../port.js";
import { sqlState } from "./errors.js";
import { DEFAULT_RETRY, retrying, type RetryOptions } from "./retry.js";

/** `serializable` where a unit of work reads then writes; `read committed` with explicit locks. */
export type Isolation = "serializable" | "read committed";

export interface TransactionOptions {
  readonly isolation: Isolation;
  readonly retry?: RetryOptions;
}

/**
 * Runs `work` in one transaction on one pooled connection, committed when it resolves and rolled
 * back when it throws. A serialization failure or deadlock (also at COMMIT) runs the whole
 * transaction again (`retrying`); anything else is thrown as is. A connection that failed below
 * SQL (network, timeout) or whose rollback fails is destroyed rather than returned to the pool.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (tx: pg.PoolClient) => Promise<T>,
  options: TransactionOptions,
): Promise<T> {
  return retrying(async () => {
    const client = await pool.connect();
    let broken = false;
    try {
      await client.query(
        `BEGIN ISOLATION LEVEL ${options.isolation === "serializable" ? "SERIALIZABLE" : "READ COMMITTED"}`,
      );
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (err) {
      // After a server error (or our own refusal) the connection is sound: roll back and reuse it.
      // After a network error or a timeout its state is unknown: destroy it without waiting.
      if (isStoreError(err) || sqlState(err) !== undefined) {
        await client.query("ROLLBACK").catch(() => {
          broken = true;
        });
      } else {
        broken = true;
      }
      throw err;
    } finally {
      client.release(broken);
    }
  }, options.retry ?? DEFAULT_RETRY);
}
