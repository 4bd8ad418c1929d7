import type { Migration } from "../migrate.js";

/**
 * The SQLite schema, oldest first. Append only: a released migration is never edited, a change
 * is a new version. Times are Unix seconds.
 */
export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "grants-and-keys",
    sql: `
      CREATE TABLE grants (
        id             TEXT PRIMARY KEY NOT NULL,
        root_id        TEXT NOT NULL,
        parent_id      TEXT,
        subject        TEXT NOT NULL,
        owner          TEXT NOT NULL,
        profile        TEXT NOT NULL,
        issued_at      INTEGER NOT NULL,
        expires_at     INTEGER NOT NULL,
        grant_json     TEXT NOT NULL,
        revoked_at     INTEGER,
        revoked_reason TEXT
      );
      CREATE INDEX grants_parent_id ON grants (parent_id);
      CREATE INDEX grants_root_id ON grants (root_id);

      CREATE TABLE keys (
        kid         TEXT PRIMARY KEY NOT NULL,
        alg         TEXT NOT NULL,
        public_jwk  TEXT NOT NULL,
        private_jwk TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        retired_at  INTEGER
      );
    `,
  },
  {
    version: 2,
    name: "decisions",
    sql: `
      CREATE TABLE decisions (
        decision_id     TEXT PRIMARY KEY NOT NULL,
        decided_at      INTEGER NOT NULL,
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
  // Placeholder for version 3 of the approvals branch (issue 8), so that this branch's list runs
  // without a gap. At the merge, keep the approvals branch's version 3 and drop this entry.
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
        id          TEXT PRIMARY KEY NOT NULL,
        principal   TEXT NOT NULL,
        roles_json  TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        created_at  INTEGER NOT NULL,
        revoked_at  INTEGER
      );
    `,
  },
];
