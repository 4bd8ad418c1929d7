import type { Chain } from "./chain.js";
import { createAuditAppends } from "../audit-appends.js";
import { guardStore, STORE_DOING, type StoreOperations } from "../guard.js";
import { isStoreError, StoreError, type Store } from "../port.js";
import { postgresApiKeyStore } from "./api-keys.js";
import { postgresApprovalLinks } from "./approval-links.js";
import { postgresApprovalStore } from "./approvals.js";
import { postgresAuditStore } from "./audit.js";
import { postgresDecisionStore } from "./decisions.js";
import { postgresEndorsementStore } from "./endorsements.js";
import { toStoreError } from "./errors.js";
import { postgresGrantStore } from "./grants.js";
import { postgresKeyStore } from "./keys.js";
import { postgresRunStore } from "./runs.js";
import { applyPostgresMigrations } from "./migrate.js";
import { POSTGRES_MIGRATIONS } from "./migrations.js";
import { createPool, type PoolOptions } from "./pool.js";
import { parsePostgresUrl, scrub } from "./url.js";

/** Where and how to open a PostgreSQL store. */
export interface PostgresStoreOptions extends PoolOptions {
  /** `postgres://user[:password]@host[:port]/database[?schema=name&…]`; never printed with its password. */
  readonly url: string;
  /** The schema Charter's tables live in (created when missing); wins over the url's `schema`. Default "public". */
  readonly schema?: string;
  /** Unix seconds, for the migration history. Default: the system clock. */
  readonly now?: () => number;
}

/**
 * Opens a PostgreSQL store: a pool whose connections all use the schema, the schema created and
 * migrated to this Charter's version (once, under an advisory lock, however many replicas start
 * together). Fails with a StoreError: UNAVAILABLE when the database cannot be reached, CORRUPT when
 * the schema is newer than this code or diverges. Messages name the database without its password.
 */
/** A pool of connections, shared with other replicas: units commit in whatever order they finish. */
const POSTGRES_TRAITS = { commitsInQueueOrder: false } as const;

export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const target = parsePostgresUrl(options.url, options.schema);
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const pool = createPool(target, options);
  try {
    await applyPostgresMigrations(pool, target.schema, POSTGRES_MIGRATIONS, now);
  } catch (err) {
    await pool.end().catch(() => undefined);
    if (isStoreError(err))
      throw new StoreError(err.code, `${target.redacted}: ${scrub(err.message, target.password)}`, {
        cause: err,
      });
    throw toStoreError(err, `open ${target.redacted}`, target.password);
  }
  const appends = createAuditAppends();
  const chain: Chain = { pool, appended: appends.notify };
  const ops: StoreOperations = {
    ...postgresGrantStore(chain),
    ...postgresKeyStore(pool),
    ...postgresDecisionStore(chain),
    ...postgresRunStore(chain),
    ...postgresApiKeyStore(pool),
    ...postgresApprovalStore(chain),
    ...postgresEndorsementStore(chain),
    ...postgresApprovalLinks(pool),
    ...postgresAuditStore(chain),
    // No file can vanish under a database server: an outage shows on the next query as UNAVAILABLE.
    checkIntact: async () => undefined,
  };
  const store = guardStore(ops, STORE_DOING, {
    adapter: "postgres store",
    translate: (err, doing) => toStoreError(err, doing, target.password),
    release: () => pool.end(),
  });
  return { ...store, traits: POSTGRES_TRAITS, onAuditAppended: appends.subscribe };
}
