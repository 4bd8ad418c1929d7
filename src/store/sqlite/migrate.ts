import type { Database } from "better-sqlite3";
import { pendingMigrations, type AppliedMigration, type Migration } from "../migrate.js";

/**
 * Brings a SQLite database up to the last of `migrations`, one IMMEDIATE transaction per
 * migration (the write lock is taken before the history is read, so two processes opening one
 * file apply each migration once). Answers the migrations it applied. Refuses, with a CORRUPT
 * StoreError, a database from a newer Charter or with a diverging history.
 */
export function applySqliteMigrations(
  db: Database,
  migrations: readonly Migration[],
  now: () => number,
): Migration[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY NOT NULL,
    name       TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const history = db.prepare<[], AppliedMigration>(
    "SELECT version, name FROM schema_migrations ORDER BY version",
  );
  const record = db.prepare<[number, string, number], never>(
    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
  );
  const applyNext = db.transaction((): Migration | undefined => {
    const next = pendingMigrations(migrations, history.all())[0];
    if (next === undefined) return undefined;
    db.exec(next.sql);
    record.run(next.version, next.name, now());
    return next;
  });
  const applied: Migration[] = [];
  for (let next = applyNext.immediate(); next !== undefined; next = applyNext.immediate())
    applied.push(next);
  return applied;
}
