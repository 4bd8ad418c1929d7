import type { Migration } from "../migrate.js";

/**
 * The PostgreSQL schema, oldest first: the same versions and names as `SQLITE_MIGRATIONS` wherever
 * the schema corresponds, so one history describes both (docs/architecture.md, "Migrations").
 * Append only: a released migration is never edited, a change is a new version. Times are Unix
 * seconds in BIGINT; JSON is kept as TEXT (canonical JSON: equal grants are equal strings);
 * `keys.seq` is the insertion order SQLite reads from its rowid.
 */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "grants-and-keys",
    sql: `
      CREATE TABLE grants (
        id             TEXT PRIMARY KEY,
        root_id        TEXT NOT NULL,
        parent_id      TEXT,
        subject        TEXT NOT NULL,
        owner          TEXT NOT NULL,
        profile        TEXT NOT NULL,
        issued_at      BIGINT NOT NULL,
        expires_at     BIGINT NOT NULL,
        grant_json     TEXT NOT NULL,
        revoked_at     BIGINT,
        revoked_reason TEXT
      );
      CREATE INDEX grants_parent_id ON grants (parent_id);
      CREATE INDEX grants_root_id ON grants (root_id);

      CREATE TABLE keys (
        seq         BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
        kid         TEXT PRIMARY KEY,
        alg         TEXT NOT NULL,
        public_jwk  TEXT NOT NULL,
        private_jwk TEXT NOT NULL,
        created_at  BIGINT NOT NULL,
        retired_at  BIGINT
      );
    `,
  },
  {
    version: 2,
    name: "decisions",
    sql: `
      CREATE TABLE decisions (
        decision_id     TEXT PRIMARY KEY,
        decided_at      BIGINT NOT NULL,
        grant_id        TEXT NOT NULL,
        root_id         TEXT NOT NULL,
        subject         TEXT NOT NULL,
        action_id       TEXT NOT NULL,
        tool_name       TEXT NOT NULL,
        call_id         TEXT NOT NULL,
        call_digest     TEXT NOT NULL,
        decision        TEXT NOT NULL,
        reason_code     TEXT,
        approval_id     TEXT,
        catalog_version TEXT NOT NULL,
        policy_version  TEXT NOT NULL
      );
      CREATE INDEX decisions_grant_id ON decisions (grant_id);
    `,
  },
  {
    version: 3,
    name: "placeholder-approvals",
    sql: "",
  },
  {
    version: 4,
    name: "api-keys",
    sql: `
      CREATE TABLE api_keys (
        id          TEXT PRIMARY KEY,
        principal   TEXT NOT NULL,
        roles_json  TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        created_at  BIGINT NOT NULL,
        revoked_at  BIGINT,
        seq         BIGINT GENERATED ALWAYS AS IDENTITY
      );
    `,
  },
];
