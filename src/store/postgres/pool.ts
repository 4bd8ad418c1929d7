import pg from "pg";
import type { PostgresTarget } from "./url.js";

/** How the pool connects and how long a database may keep Charter waiting. */
export interface PoolOptions {
  /** `application_name` of every connection, as pg_stat_activity shows it; default "charter". */
  readonly applicationName?: string;
  /** Most connections; default 10. */
  readonly poolSize?: number;
  /** A connection not established by then fails UNAVAILABLE; default 5000. */
  readonly connectTimeoutMs?: number;
  /**
   * A statement not answered by then fails UNAVAILABLE — server-side (`statement_timeout`) and,
   * for a database that went silent, client-side (pg's `query_timeout`, a little later). Default 5000.
   */
  readonly statementTimeoutMs?: number;
}

type TypeParser = pg.CustomTypesConfig["getTypeParser"];
const builtinParser: TypeParser = pg.types.getTypeParser;

/** BIGINT (Unix seconds) as a number; a value past 2^53 reads NaN, which row checks report CORRUPT. */
function parseInt8(text: string): number {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : Number.NaN;
}

/** pg's parsers, except that BIGINT columns read as numbers instead of strings. */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: Parameters<TypeParser>[0], format?: Parameters<TypeParser>[1]): unknown =>
    oid === pg.types.builtins.INT8 && format !== "binary"
      ? parseInt8
      : (builtinParser(oid, format) as unknown)) as TypeParser,
};

/**
 * A pool on `target` whose connections all use Charter's schema (`search_path`, a startup
 * option, so it holds on every connection the pool makes, reconnections included). A broken idle
 * connection is dropped by the pool and replaced on the next checkout: when the database comes
 * back, the pool reconnects by itself.
 */
export function createPool(target: PostgresTarget, options: PoolOptions = {}): pg.Pool {
  const statementTimeout = options.statementTimeoutMs ?? 5000;
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    options: `-c search_path=${target.schema}`,
    application_name: options.applicationName ?? "charter",
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    statement_timeout: statementTimeout,
    query_timeout: statementTimeout + 1000,
    idle_in_transaction_session_timeout: statementTimeout * 2,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    types: TYPES,
  });
  // An idle connection that breaks (the database restarted, a proxy cut it) is removed by the
  // pool; without a listener its error would crash the process. The next query reconnects.
  pool.on("error", () => undefined);
  return pool;
}
