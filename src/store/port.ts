export {
  APPROVAL_EVENT_KINDS,
  type ApprovalEvent,
  type ApprovalEventKind,
} from "../core/approval.js";
import type { RunEffect, RunStore } from "./port-runs.js";
import type { TaskGrant } from "../core/grant.js";
import type { GrantOrigin } from "../core/replay.js";
import type { Decision, ReasonCode } from "../core/verdict.js";
import type { ShadowFlip } from "../core/shadow-policy.js";

/** Why a store operation failed. UNAVAILABLE means "could not answer" and fails the RPC closed. */
export type StoreErrorCode = "UNAVAILABLE" | "CONFLICT" | "NOT_FOUND" | "CORRUPT";

/** The one error class of the store layer. */
export class StoreError extends Error {
  override readonly name = "StoreError";
  readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export function isStoreError(err: unknown): err is StoreError {
  return err instanceof StoreError;
}

// The approval and audit parts of the port live in their own files; the port is still one.
import type { ApprovalStore } from "./port-approvals.js";
import type { ApprovalLinkStore } from "./port-links.js";
import type { AuditStore } from "./port-audit.js";
import type { EndorsementStore } from "./port-endorsements.js";
import type { HeldStep, StepSlot, StepStore } from "./port-steps.js";
export type { HeldStep, StepSlot, StepStore } from "./port-steps.js";
export type {
  LabelSource,
  ReportOutcome,
  ResultReport,
  RunEffect,
  RunQuery,
  RunRow,
  RunSnapshot,
  RunStore,
} from "./port-runs.js";
export type {
  ApprovalCursor,
  ApprovalDraft,
  ApprovalQuery,
  ApprovalStore,
  ApprovalVote,
  StoredApproval,
  VoteOutcome,
} from "./port-approvals.js";
export type {
  EndorsedCall,
  EndorsementQuery,
  EndorsementStore,
  RevokeOutcome,
} from "./port-endorsements.js";
export type { ApprovalLink, ApprovalLinkStore, LinkRedemption } from "./port-links.js";
export {
  AUDIT_KINDS,
  type AuditCheckpoint,
  type AuditEntry,
  type AuditKind,
  type AuditStore,
} from "./port-audit.js";

/** A grant as stored, with its revocation state. */
export interface StoredGrant {
  readonly grant: TaskGrant;
  /** Unix seconds of revocation, when revoked. */
  readonly revokedAt?: number;
  readonly revokedReason?: string;
}

/** Issued grants and their revocations. */
export interface GrantStore {
  /**
   * Records an issued (or delegated) grant and its audit record. Inserting the same id twice
   * with different content is a CONFLICT; the same content again is a no-op.
   */
  putGrant(grant: TaskGrant, caller?: string, origin?: GrantOrigin): Promise<void>;
  getGrant(id: string): Promise<StoredGrant | undefined>;
  /** What the grant was made from (putGrant's `origin`); undefined for a grant stored without one, or unknown. */
  getGrantOrigin(id: string): Promise<GrantOrigin | undefined>;
  /**
   * Revokes a grant and every grant delegated from it; answers the ids newly or already revoked
   * (an earlier revocation keeps its time and reason), with one audit record per newly revoked
   * grant. An unknown id is NOT_FOUND. `caller` (here and in putGrant): the authenticated
   * principal that asked, written into the audit records.
   */
  revokeGrant(id: string, reason: string, at: number, caller?: string): Promise<string[]>;
  /**
   * True when any of these grant ids (a grant and its ancestors) is revoked, as of a read made
   * after this call: a revocation committed before it, through any connection or process, is seen.
   */
  anyRevoked(ids: readonly string[]): Promise<boolean>;
  /**
   * Deletes the grants that expired before `before` (Unix seconds) and answers how many. A grant
   * that is an ancestor of a grant kept (one expiring at or after `before`) is kept too, with its
   * revocation state, so a still-valid grant's chain is still checked for revocation.
   */
  pruneGrants(before: number): Promise<number>;
  /**
   * Up to `limit` grants neither revoked nor expired at `now` (Unix seconds) whose id sorts after
   * `afterId` ("" from the start), in id order: a page of what a policy reload sweeps for grants it
   * withdraws (the kill switch made sticky). Bounded by `limit`; the next page starts after the last id.
   */
  listLiveGrants(afterId: string, now: number, limit: number): Promise<TaskGrant[]>;
}

/** A signing key pair as stored: JWKs as JSON text. The private half never leaves the process. */
export interface StoredKey {
  readonly kid: string;
  readonly alg: "EdDSA";
  readonly publicJwk: string;
  readonly privateJwk: string;
  /** Unix seconds. */
  readonly createdAt: number;
  /** Unix seconds after which the key signs nothing new (it still verifies until its tokens expire). */
  readonly retiredAt?: number;
}

/** Signing keys, persisted so that tokens survive restarts. */
export interface KeyStore {
  /**
   * All keys, oldest first (by createdAt, then insertion order). Every replica must see the same
   * order: the key ring signs with the first active key, so replicas agree on one key.
   */
  listKeys(): Promise<StoredKey[]>;
  /** Adds a key; a kid that exists already is a CONFLICT. */
  insertKey(key: StoredKey): Promise<void>;
  /**
   * Adds `key` only when the store holds no active key, atomically with that check; answers
   * whether it was added. Replicas starting together on one store thus store exactly one first
   * key, whatever their clocks say (with insertKey, a later insert with an earlier createdAt could
   * sort first and split the signers). A kid that exists already is a CONFLICT.
   */
  insertKeyUnlessActive(key: StoredKey): Promise<boolean>;
  /** Retires a key; retiring again keeps the earlier time. An unknown kid is NOT_FOUND. */
  retireKey(kid: string, at: number): Promise<void>;
  /**
   * Replaces a key's stored private half (to encrypt it at rest), only if it still equals
   * `expected`; otherwise a CONFLICT. An unknown kid is NOT_FOUND. The old bytes are overwritten,
   * not left in free pages.
   */
  rewrapKey(kid: string, expected: string, next: string): Promise<void>;
}

/** One decision as recorded: ids, names, digests and codes — never raw argument values or tokens. */
export interface DecisionRecord {
  /** e.g. dec_<uuid>. */
  readonly decisionId: string;
  /** Unix seconds. */
  readonly decidedAt: number;
  /** "" when the token did not verify. */
  readonly grantId: string;
  /** "" when the token did not verify. */
  readonly rootId: string;
  /** "" when the token did not verify. */
  readonly subject: string;
  /** "" when the call named nothing the catalog knows. */
  readonly actionId: string;
  readonly toolName: string;
  readonly callId: string;
  readonly callDigest: string;
  readonly decision: Decision;
  readonly reasonCode?: ReasonCode;
  readonly approvalId?: string;
  readonly catalogVersion: string;
  readonly policyVersion: string;
  /** The authenticated caller (its principal) that asked; absent offline and before authentication. */
  readonly caller?: string;
  /** The run the call belongs to, when it carries a step. */
  readonly runId?: string;
  /** The call's step (`stepKey`), when it carries one: the audit keys decisions by run and step. */
  readonly stepKey?: string;
  /** For a call in a run: the labels the run had seen when it was decided (sorted; absent when none). */
  readonly runLabels?: readonly string[];
  /** The rule over the run that denied the call or held it for approval. */
  readonly rule?: string;
  /** The version of the shadow policy decided beside the live one, when one is configured. */
  readonly shadowPolicyVersion?: string;
  /** What the shadow policy decided where it disagreed (the live verdict is `decision`'s, as decided before the commit). */
  readonly shadowFlip?: ShadowFlip;
}

/** One grant's limits, as a budget charge needs them. A grant without either limit has nothing to count. */
export interface BudgetLimits {
  readonly grantId: string;
  readonly maxCalls?: number;
  readonly maxCallsPerAction?: number;
}

/**
 * What one allowed call costs: one call, and one call of `actionId`, on the calling grant and on
 * every ancestor (a task and its sub-agents together never exceed the root's budget).
 */
export interface BudgetCharge {
  readonly actionId: string;
  /** The calling grant and every ancestor, each with its own limits. */
  readonly grants: readonly BudgetLimits[];
}

/** The effects an allow has, committed in the same unit of work as its record or not at all. */
export interface DecisionEffects {
  /** Charged only when the record is an allow; every counter must have room. */
  readonly budget?: BudgetCharge;
  /** Consumed only when the record is an allow: approved, unexpired at `decidedAt`, unused, same digest. */
  readonly approval?: { readonly approvalId: string; readonly callDigest: string };
  /**
   * The step the decision claims — unlike the others, for every decision, not only an allow.
   * When the step is held already (and not replaceable, see StepSlot), nothing is written.
   */
  readonly step?: StepSlot;
  /** What an allow (or a dry run's effect_suppressed) does to its run, checked against the run as it is now (`RunEffect`). */
  readonly run?: RunEffect;
  /**
   * The decision's retained inputs (`retainDecisionInputsDays`), as the sealer wrote them: kept
   * beside the record, in the same unit, whatever the outcome; never in the audit chain.
   */
  readonly inputs?: string;
}

/** Reason codes the store may turn an allow into when its effects cannot be had. */
export type CommitRefusalCode = "LIMIT_EXCEEDED" | "APPROVAL_CONSUMED" | "APPROVAL_EXPIRED";

/**
 * The outcome of a commit: the record as given, or — for an allow whose budget is spent or whose
 * approval was used or expired meanwhile — the same record as a deny with `reasonCode`, and no
 * effect at all. Either way the record is durable and in the audit chain when this resolves.
 */
export type CommitOutcome =
  | { readonly kind: "committed" }
  | { readonly kind: "refused"; readonly reasonCode: CommitRefusalCode; readonly detail: string }
  /** The step was decided already (another replica or a concurrent retry won): nothing was written or consumed. */
  | { readonly kind: "step_held"; readonly held: HeldStep }
  /** The run is no longer what the decision was made on (`RunEffect`): nothing was written; decide again. */
  | { readonly kind: "run_changed"; readonly detail: string };

/** A recorded decision as `charter replay` reads it: its audit seq, what it decided, and its inputs (as stored) when kept. */
export interface ReplayRow {
  readonly seq: number;
  readonly decisionId: string;
  readonly decidedAt: number;
  readonly grantId: string;
  readonly actionId: string;
  readonly toolName: string;
  readonly callId: string;
  readonly decision: Decision;
  readonly reasonCode?: ReasonCode;
  readonly approvalId?: string;
  readonly inputs?: string;
}

/** The decisions Charter made, recorded before it answers. */
export interface DecisionStore {
  /**
   * The commit step of one decision, one unit of work: the approval consumption and the budget
   * charges of an allow (conditional: no over-spend under concurrency, across processes), the
   * decision record and its audit record — all or nothing, durable before it resolves.
   * Idempotent by decisionId: the same record again answers the first outcome and does nothing
   * more; other content under the id is a CONFLICT.
   */
  commitDecision(record: DecisionRecord, effects?: DecisionEffects): Promise<CommitOutcome>;
  /** The recorded decision (as committed: a refused allow reads back as its deny), for tests and tooling. */
  getDecision(decisionId: string): Promise<DecisionRecord | undefined>;
  /**
   * For `charter replay`: the decisions whose audit records have seq in (afterSeq, toSeq], in
   * audit order, at most `limit`, each with its seq and its retained inputs (as stored) when kept.
   */
  readReplayPage(afterSeq: number, toSeq: number, limit: number): Promise<ReplayRow[]>;
  /** Deletes the inputs of decisions made before `before` (Unix seconds); answers how many. */
  pruneDecisionInputs(before: number): Promise<number>;
  /** Calls counted so far against a grant: in total and per action id. */
  getBudgetUsage(
    grantId: string,
  ): Promise<{ readonly calls: number; readonly perAction: Readonly<Record<string, number>> }>;
}

/** A caller's API key as stored: never the secret, only its hash. */
export interface StoredApiKey {
  /** Public id, e.g. `key_1a2b3c4d`, used to list and revoke; not a credential. */
  readonly id: string;
  /** Who presents the key (an orchestrator, a gateway, an operator). */
  readonly principal: string;
  /** The roles the key grants, sorted. */
  readonly roles: readonly string[];
  /** Lower-case hex SHA-256 of the secret (see `src/authority/api-keys.ts`). */
  readonly secretHash: string;
  /** Unix seconds. */
  readonly createdAt: number;
  /** Unix seconds of revocation, when revoked. */
  readonly revokedAt?: number;
}

/** Callers' API keys, stored only as hashes. */
export interface ApiKeyStore {
  /** Adds a key; an id or hash that exists already is a CONFLICT. */
  createApiKey(key: StoredApiKey): Promise<void>;
  /** Every key, revoked ones included, oldest first. */
  listApiKeys(): Promise<StoredApiKey[]>;
  /** Revokes a key; revoking again keeps the earlier time. An unknown id is NOT_FOUND. */
  revokeApiKey(id: string, at: number): Promise<void>;
  /** The key whose secret hashes to `secretHash`, revoked or not; undefined when none. */
  findApiKeyByHash(secretHash: string): Promise<StoredApiKey | undefined>;
  /** Whether any key is unrevoked. */
  hasActiveApiKey(): Promise<boolean>;
  /**
   * Whether this store ever held an API key: set, in the same write, by the first createApiKey
   * and never cleared (revoking every key leaves it set). `auth: none` is protected mode only
   * while it is false (`src/app/auth-mode.ts`).
   */
  protectedModeEnded(): Promise<boolean>;
}

/** What the store records of itself (table `store_meta`): its id, the last authentication mode it was served in. */
export interface StoreMetaStore {
  /** The value recorded under `name`; undefined when none. */
  readMeta(name: string): Promise<string | undefined>;
  /** Records `value` under `name`, replacing what was there. */
  writeMeta(name: string, value: string): Promise<void>;
  /**
   * Records `value` under `name` unless a value is there already, and answers the value that is
   * there now: of two openers claiming at once (replicas starting together), both get the first's.
   */
  claimMeta(name: string, value: string): Promise<string>;
}

/** What a store is, for the layers that order their work around it. */
export interface StoreTraits {
  /**
   * Units of work commit in the order they are asked, and a later unit sees what an earlier one
   * wrote (SQLite's group commit: one connection, one queue). False where concurrent units may
   * commit in any order (PostgreSQL: a pool of connections, and other replicas).
   */
  readonly commitsInQueueOrder: boolean;
}

/** Everything Charter persists, behind one port with one adapter per database. */
export interface Store
  extends
    GrantStore,
    KeyStore,
    DecisionStore,
    StepStore,
    RunStore,
    ApprovalStore,
    EndorsementStore,
    ApprovalLinkStore,
    AuditStore,
    ApiKeyStore,
    StoreMetaStore {
  readonly traits: StoreTraits;
  /**
   * Calls `listener` with how many audit records this process appended, after the unit of work
   * (or group) that wrote them is durable; answers the function that stops the calls. A count for
   * when to sign a checkpoint: the chain itself is read with `auditHead`. (A unit that fails inside
   * a group that commits may still be counted: the count is a trigger, never a tally of the log.)
   */
  onAuditAppended(listener: (records: number) => void): () => void;
  /**
   * Resolves when the store is still the one opened and can answer; fails UNAVAILABLE once it
   * cannot (closed, or a SQLite file deleted, replaced or truncated under the process). The server
   * asks before every RPC, so even an RPC that needs no stored data fails closed.
   */
  checkIntact(): Promise<void>;
  /** Closes connections (a second close is harmless); later calls fail with UNAVAILABLE. */
  close(): Promise<void>;
}
