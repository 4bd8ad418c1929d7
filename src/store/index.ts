export * from "./migrate.js";
export * from "./port.js";
export { openSqliteStore, type SqliteStoreOptions } from "./sqlite/open.js";
export { openStore, type OpenStoreOptions } from "./open.js";
