export * from "./migrate.js";
export { openStore, type OpenStoreOptions } from "./open.js";
export * from "./port.js";
export { openSqliteStore, type SqliteStoreOptions } from "./sqlite/open.js";
