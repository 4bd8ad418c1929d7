export * from "./migrate.js";
export { openStore, sqliteStoreFile, type OpenStoreOptions } from "./open.js";
export * from "./port.js";
export { openSqliteStore, type SqliteStoreOptions } from "./sqlite/open.js";
export { openPostgresStore, type PostgresStoreOptions } from "./postgres/open.js";
export { DEFAULT_RETRY, isRetryable, retrying, type RetryOptions } from "./postgres/retry.js";
export {
  isStoreIdentityError,
  StoreIdentityError,
  storeIdFile,
  readStoreIdFile,
  sqliteStorePresent,
} from "./store-identity.js";
