import { StoreError } from "./port.js";

/** One step of a database schema: applied once, in version order, in its own transaction. */
export interface Migration {
  /** Positive, strictly increasing along a migration list, starting at 1 without gaps. */
  readonly version: number;
  /** A short name, recorded beside the version to catch two codebases that diverged. */
  readonly name: string;
  readonly sql: string;
}

/** A migration as recorded in a database's `schema_migrations` table. */
export interface AppliedMigration {
  readonly version: number;
  readonly name: string;
}

/** The schema version a migration list brings a database to (0 for an empty list). */
export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.at(-1)?.version ?? 0;
}

/**
 * The migrations still to apply to a database that has recorded `applied`, in order. Refuses, as
 * CORRUPT, a database from a newer Charter, one whose record has gaps, and one whose recorded
 * name for a version differs from the code's: applying anything to those would guess.
 */
export function pendingMigrations(
  migrations: readonly Migration[],
  applied: readonly AppliedMigration[],
): Migration[] {
  checkMigrationList(migrations);
  const known = latestVersion(migrations);
  const recorded = [...applied].sort((a, b) => a.version - b.version);
  const newest = recorded.at(-1)?.version ?? 0;
  if (newest > known) {
    throw new StoreError(
      "CORRUPT",
      `database schema version ${newest} is newer than this Charter (${known})`,
    );
  }
  recorded.forEach((row, i) => {
    const expected = migrations[i];
    if (expected === undefined || row.version !== expected.version) {
      throw new StoreError(
        "CORRUPT",
        `database schema history is not a prefix of this Charter's: found version ${row.version}`,
      );
    }
    if (row.name !== expected.name) {
      throw new StoreError(
        "CORRUPT",
        `database schema version ${row.version} is "${row.name}", this Charter expects "${expected.name}"`,
      );
    }
  });
  return migrations.slice(recorded.length);
}

/** Throws unless versions run 1, 2, 3… — a programming error in the adapter, not a database fault. */
function checkMigrationList(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new Error(`migration "${m.name}" has version ${m.version}, expected ${i + 1}`);
  });
}
