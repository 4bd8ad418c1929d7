import type pg from "pg";
import { pendingMigrations, type AppliedMigration, type Migration } from "../migrate.js";
import { inTransaction } from "./transaction.js";

/**
 * Brings `schema` up to the last of `migrations`, one transaction per migration (PostgreSQL DDL is
 * transactional: a failed migration leaves nothing behind). Each transaction first takes an
 * advisory lock named after the schema, then creates the schema and the history table when
 * missing and reads the history, so replicas starting together apply each migration once and
 * never race on CREATE. Answers the migrations it applied; refuses, CORRUPT, a schema from a
 * newer Charter or with a diverging history (`pendingMigrations`).
 */
export async function applyPostgresMigrations(
  pool: pg.Pool,
  schema: string,
  migrations: readonly Migration[],
  now: () => number,
): Promise<Migration[]> {
  const applied: Migration[] = [];
  for (;;) {
    const next = await inTransaction(
      pool,
      async (tx) => {
        await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`charter.migrate.${schema}`]);
        const exists = await tx.query<{ found: boolean }>(
          "SELECT to_regnamespace($1) IS NOT NULL AS found",
          [schema],
        );
        if (exists.rows[0]?.found !== true) await tx.query(`CREATE SCHEMA ${schema}`);
        await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
          version    INTEGER PRIMARY KEY,
          name       TEXT NOT NULL,
          applied_at BIGINT NOT NULL
        )`);
        const history = await tx.query<AppliedMigration>(
          "SELECT version, name FROM schema_migrations ORDER BY version",
        );
        const pending = pendingMigrations(migrations, history.rows)[0];
        if (pending === undefined) return undefined;
        await tx.query(pending.sql);
        await tx.query(
          "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
          [pending.version, pending.name, now()],
        );
        return pending;
      },
      { isolation: "read committed" },
    );
    if (next === undefined) return applied;
    applied.push(next);
  }
}
