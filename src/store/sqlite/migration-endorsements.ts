import type { Migration } from "../migrate.js";

/** Migration 13 of the sqlite store: scoped endorsements (docs/approvals.md#endorsements). */
export const SQLITE_ENDORSEMENTS: Migration = {
  version: 13,
  name: "endorsements",
  sql: `
    -- Scoped endorsements (docs/approvals.md#endorsements): an approver's approval of the calls of
    -- one action under one grant, held for one requirement, within bounds (a JSON Schema), for at
    -- most max_calls calls until expires_at. used_calls is charged in the unit that mints a call's approval.
    -- The rule over the run that held an approval's call (NULL: an argument rule or approval list,
    -- and before): an endorsement approves only calls held as the endorsed one was.
    ALTER TABLE approvals ADD COLUMN rule TEXT;
    CREATE TABLE endorsements (
      id          TEXT PRIMARY KEY NOT NULL,
      grant_id    TEXT NOT NULL,
      owner       TEXT NOT NULL,
      subject     TEXT NOT NULL,
      action_id   TEXT NOT NULL,
      requirement TEXT NOT NULL,
      rule        TEXT,
      bounds_json TEXT NOT NULL,
      max_calls   INTEGER NOT NULL,
      used_calls  INTEGER NOT NULL,
      created_at  INTEGER NOT NULL,
      expires_at  INTEGER NOT NULL,
      endorsed_by TEXT NOT NULL,
      approval_id TEXT NOT NULL,
      status      TEXT NOT NULL,
      revoked_at  INTEGER,
      revoked_by  TEXT
    );
    CREATE INDEX endorsements_scope ON endorsements (grant_id, action_id, requirement) WHERE status = 'active';
    CREATE INDEX endorsements_owner_created ON endorsements (owner, created_at DESC, id DESC);
    CREATE INDEX endorsements_created ON endorsements (created_at DESC, id DESC);
  `,
};
