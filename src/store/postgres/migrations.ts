import type { Migration } from "../migrate.js";
import { POSTGRES_APPROVAL_LINKS } from "./migration-links.js";
import { POSTGRES_ENDORSEMENTS } from "./migration-endorsements.js";

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
    name: "approvals-budgets-audit",
    sql: `
      CREATE TABLE approvals (
        id                 TEXT PRIMARY KEY,
        grant_id           TEXT NOT NULL,
        root_id            TEXT NOT NULL,
        subject            TEXT NOT NULL,
        owner              TEXT NOT NULL,
        action_id          TEXT NOT NULL,
        tool_name          TEXT NOT NULL,
        requirement        TEXT NOT NULL,
        required_approvals INTEGER NOT NULL,
        call_digest        TEXT NOT NULL,
        summary_json       TEXT NOT NULL,
        arguments_json     TEXT NOT NULL,
        status             TEXT NOT NULL,
        created_at         BIGINT NOT NULL,
        expires_at         BIGINT NOT NULL,
        approved_by_json   TEXT NOT NULL,
        decided_at         BIGINT,
        decided_by         TEXT,
        note               TEXT,
        status_reason_json TEXT
      );
      CREATE INDEX approvals_owner_created ON approvals (owner, created_at DESC, id COLLATE "C" DESC);
      CREATE INDEX approvals_created ON approvals (created_at DESC, id COLLATE "C" DESC);
      CREATE INDEX approvals_grant_id ON approvals (grant_id);
      CREATE INDEX approvals_live_expiry ON approvals (expires_at) WHERE status IN ('pending', 'approved');
      -- Once per call digest: at most one live approval, whatever the concurrency.
      CREATE UNIQUE INDEX approvals_live_digest ON approvals (call_digest) WHERE status IN ('pending', 'approved');

      CREATE TABLE approval_votes (
        approval_id TEXT NOT NULL REFERENCES approvals (id),
        approver    TEXT NOT NULL,
        outcome     TEXT NOT NULL,
        at          BIGINT NOT NULL,
        PRIMARY KEY (approval_id, approver)
      );

      -- seq is assigned under the chain lock (max + 1), never by a sequence: it commits in order.
      CREATE TABLE approval_events (
        seq           BIGINT PRIMARY KEY,
        owner         TEXT NOT NULL,
        approval_id   TEXT NOT NULL,
        kind          TEXT NOT NULL,
        at            BIGINT NOT NULL,
        approval_json TEXT NOT NULL
      );
      CREATE INDEX approval_events_owner ON approval_events (owner, seq);

      CREATE TABLE budget_counters (
        grant_id  TEXT NOT NULL,
        action_id TEXT NOT NULL, -- '' counts every call of the grant
        used      INTEGER NOT NULL,
        PRIMARY KEY (grant_id, action_id)
      );

      CREATE TABLE audit_log (
        seq   BIGINT PRIMARY KEY,
        entry TEXT NOT NULL,
        hash  TEXT NOT NULL
      );

      CREATE TABLE audit_checkpoints (
        seq       BIGINT PRIMARY KEY,
        hash      TEXT NOT NULL,
        at        BIGINT NOT NULL,
        signature TEXT NOT NULL
      );
    `,
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
  {
    version: 5,
    name: "decisions-caller",
    sql: `
      -- The authenticated caller of a decision (NULL offline and for decisions made before).
      ALTER TABLE decisions ADD COLUMN caller TEXT;
    `,
  },
  {
    version: 6,
    name: "decision-steps",
    sql: `
      -- The run and step a decision was asked for (NULL for calls without a step and decisions made before).
      ALTER TABLE decisions ADD COLUMN run_id TEXT;
      ALTER TABLE decisions ADD COLUMN step_key TEXT;
      CREATE INDEX decisions_run_step ON decisions (grant_id, run_id, step_key) WHERE run_id IS NOT NULL;

      -- One decision per (grant, run, step): a retry of the step answers this one (Authorize is idempotent).
      CREATE TABLE decision_steps (
        grant_id     TEXT NOT NULL,
        run_id       TEXT NOT NULL,
        step_key     TEXT NOT NULL,
        fingerprint  TEXT NOT NULL,
        decision_id  TEXT NOT NULL REFERENCES decisions (decision_id),
        verdict_json TEXT NOT NULL,
        receipt      TEXT,
        PRIMARY KEY (grant_id, run_id, step_key)
      );
    `,
  },
  {
    version: 7,
    name: "revocation-epoch",
    // SQLite's version 7 adds the counter its in-process cache of "not revoked" answers checks.
    // PostgreSQL is asked about revocations on every call (one round trip either way), so this
    // version keeps the two histories one and changes nothing here.
    sql: "-- nothing to change on PostgreSQL",
  },
  {
    version: 8,
    name: "runs",
    sql: `
      -- What a decision saw of its run, and the rule over the run that decided it (NULL before).
      ALTER TABLE decisions ADD COLUMN run_labels TEXT; -- JSON text of the sorted list
      ALTER TABLE decisions ADD COLUMN rule_id TEXT;

      -- The labels a run has seen: the first sighting of each is kept (ON CONFLICT DO NOTHING).
      CREATE TABLE run_labels (
        grant_id    TEXT NOT NULL,
        run_id      TEXT NOT NULL, -- '*': the grant's row for sub-agents delegated without a run
        label       TEXT NOT NULL,
        action_id   TEXT NOT NULL,
        tool_name   TEXT NOT NULL,
        call        BIGINT NOT NULL,
        decision_id TEXT NOT NULL,
        at          BIGINT NOT NULL,
        expires_at  BIGINT NOT NULL,
        PRIMARY KEY (grant_id, run_id, label)
      );
      CREATE INDEX run_labels_expiry ON run_labels (expires_at);

      -- A run's allowed calls, and when each action was last allowed in it (pruned with its calls row).
      CREATE TABLE run_calls (
        grant_id   TEXT NOT NULL,
        run_id     TEXT NOT NULL,
        calls      BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (grant_id, run_id)
      );
      CREATE INDEX run_calls_expiry ON run_calls (expires_at);
      CREATE TABLE run_last (
        grant_id  TEXT NOT NULL,
        run_id    TEXT NOT NULL,
        action_id TEXT NOT NULL,
        at        BIGINT NOT NULL,
        PRIMARY KEY (grant_id, run_id, action_id)
      );

      -- One charge per window and allowed decision; a failed call's charges are released.
      CREATE TABLE window_charges (
        window_key  TEXT NOT NULL,
        decision_id TEXT NOT NULL,
        at          BIGINT NOT NULL,
        amount      DOUBLE PRECISION NOT NULL,
        released    BOOLEAN NOT NULL DEFAULT FALSE,
        expires_at  BIGINT NOT NULL, -- at + the window's seconds
        PRIMARY KEY (window_key, decision_id)
      );
      CREATE INDEX window_charges_window_at ON window_charges (window_key, at);
      CREATE INDEX window_charges_decision ON window_charges (decision_id);
      CREATE INDEX window_charges_expiry ON window_charges (expires_at);
    `,
  },
  {
    version: 9,
    name: "store-meta",
    sql: `
      -- What the store says of itself: its id (written by the code that opens it, once) and
      -- whether protected mode ended (the first API key ever created: set with it, never cleared).
      CREATE TABLE store_meta (
        name  TEXT PRIMARY KEY NOT NULL,
        value TEXT NOT NULL
      );
      -- A store that held a key before this version has left protected mode already.
      INSERT INTO store_meta (name, value)
        SELECT 'protected_mode_ended', CAST((SELECT min(created_at) FROM api_keys) AS TEXT)
        WHERE EXISTS (SELECT 1 FROM api_keys);
    `,
  },
  {
    version: 10,
    name: "replay-inputs",
    sql: `
      -- What each grant was made from (its compose request, or its delegation spec), JSON text;
      -- NULL for grants issued before this version, which \`charter replay\` cannot make again.
      ALTER TABLE grants ADD COLUMN origin_json TEXT;

      -- A decision's inputs (its arguments and the run it was decided on), kept only while
      -- retainDecisionInputsDays says; sealed under the key-encryption key when one is set.
      CREATE TABLE decision_inputs (
        decision_id TEXT PRIMARY KEY NOT NULL,
        decided_at  BIGINT NOT NULL,
        inputs      TEXT NOT NULL
      );
      CREATE INDEX decision_inputs_decided_at ON decision_inputs (decided_at);
    `,
  },
  {
    version: 11,
    name: "shadow-policy",
    sql: `
      -- The shadow policy decided beside the live one (NULL without one, and before): its version,
      -- and where it decided otherwise its verdict, reason code and rule (the flip).
      ALTER TABLE decisions ADD COLUMN shadow_policy_version TEXT;
      ALTER TABLE decisions ADD COLUMN shadow_to TEXT;
      ALTER TABLE decisions ADD COLUMN shadow_reason_code TEXT;
      ALTER TABLE decisions ADD COLUMN shadow_rule TEXT;
    `,
  },
  POSTGRES_APPROVAL_LINKS,
  POSTGRES_ENDORSEMENTS,
];
