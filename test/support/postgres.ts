import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, it } from "vitest";

/**
 * The PostgreSQL the tests use: CHARTER_TEST_DATABASE_URL, by default the project machines'
 * server (127.0.0.1:5432, user postgres, trust auth, database test). Tests never change that
 * server: each file creates its own schema and drops it.
 */
export const POSTGRES_URL =
  process.env["CHARTER_TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * In CI (CI=true) or with CHARTER_REQUIRE_POSTGRES=1, an unreachable PostgreSQL fails the
 * PostgreSQL tests; elsewhere they are skipped with a warning on stderr.
 */
export const POSTGRES_REQUIRED =
  process.env["CI"] === "true" || process.env["CHARTER_REQUIRE_POSTGRES"] === "1";

/** Whether the server answered a `SELECT 1` at load time, and if not, why. */
export const POSTGRES:
  { readonly reachable: true } | { readonly reachable: false; readonly reason: string } =
  await probe();

async function probe(): Promise<{ reachable: true } | { reachable: false; reason: string }> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return { reachable: true };
  } catch (err) {
    const reason = err instanceof AggregateError ? err.errors.map(String).join("; ") : String(err);
    return { reachable: false, reason };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * `describe` for tests that need PostgreSQL: runs them when the server answers; when it does not,
 * fails with one test naming the reason where PostgreSQL is required (CI), else skips them loudly.
 */
export function describePostgres(name: string, body: () => void): void {
  if (POSTGRES.reachable) {
    describe(name, body);
    return;
  }
  const where = new URL(POSTGRES_URL).host;
  if (POSTGRES_REQUIRED) {
    describe(name, () => {
      it("reaches PostgreSQL (required: CI=true or CHARTER_REQUIRE_POSTGRES=1)", () => {
        throw new Error(
          `PostgreSQL at ${where} is unreachable and required here: ${POSTGRES.reason}`,
        );
      });
    });
    return;
  }
  console.warn(
    `SKIPPED "${name}": PostgreSQL at ${where} is unreachable (${POSTGRES.reason}); CI=true or CHARTER_REQUIRE_POSTGRES=1 makes this a failure`,
  );
  describe.skip(name, body);
}

/** A schema of its own for one test file, on the test database. */
export interface TestSchema {
  readonly name: string;
  /** POSTGRES_URL with `?schema=<name>`: what a Charter config or openStore takes. */
  readonly url: string;
  /** Creates the (empty) schema; a store opened on `url` migrates it. */
  create(): Promise<void>;
  /** Empties every table but the migration history (between tests). */
  truncate(): Promise<void>;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

/** A unique, not yet existing schema name; the store creates the schema when it opens. */
export function testSchema(label: string): TestSchema {
  const name = `charter_${label.replace(/[^a-z0-9]/g, "_")}_${process.pid}_${randomBytes(4).toString("hex")}`;
  const url = new URL(POSTGRES_URL);
  url.searchParams.set("schema", name);
  return {
    name,
    url: url.href,
    create: () => admin((client) => client.query(`CREATE SCHEMA ${name}`)).then(() => undefined),
    truncate: () =>
      admin(async (client) => {
        const { rows } = await client.query<{ t: string }>(
          "SELECT tablename AS t FROM pg_tables WHERE schemaname = $1 AND tablename <> 'schema_migrations'",
          [name],
        );
        if (rows.length > 0)
          await client.query(
            `TRUNCATE ${rows.map((r) => `${name}.${r.t}`).join(", ")} RESTART IDENTITY CASCADE`,
          );
      }),
    drop: () =>
      admin((client) => client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`)).then(
        () => undefined,
      ),
  };
}

/** Runs `work` on a fresh connection to the test database. */
export async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
