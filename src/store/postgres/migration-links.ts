import type { Migration } from "../migrate.js";

/** Migration 12: single-use approval links, kept as the SHA-256 of their token only; decisions by approval. */
export const POSTGRES_APPROVAL_LINKS: Migration = {
  version: 12,
  name: "approval-links",
  sql: `
    CREATE TABLE approval_links (
      token_hash  TEXT PRIMARY KEY NOT NULL, -- lower-case hex SHA-256 of the token; never the token
      approval_id TEXT NOT NULL,
      approver    TEXT NOT NULL,
      created_at  BIGINT NOT NULL,
      expires_at  BIGINT NOT NULL,
      used_at     BIGINT
    );
    CREATE INDEX approval_links_approval ON approval_links (approval_id);
    CREATE INDEX approval_links_expiry ON approval_links (expires_at);
    -- The inbox shows an approval's run: read from the decision that held the call.
    CREATE INDEX decisions_approval ON decisions (approval_id) WHERE approval_id IS NOT NULL;
  `,
};
