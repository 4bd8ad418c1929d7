import type { TaskGrant } from "../core/grant.js";
import type { Decision, ReasonCode } from "../core/verdict.js";

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

/** A grant as stored, with its revocation state. */
export interface StoredGrant {
  readonly grant: TaskGrant;
  /** Unix seconds of revocation, when revoked. */
  readonly revokedAt?: number;
  readonly revokedReason?: string;
}

/** Issued grants and their revocations. */
export interface GrantStore {
  /** Records an issued grant. Inserting the same id twice with different content is a CONFLICT. */
  putGrant(grant: TaskGrant): Promise<void>;
  getGrant(id: string): Promise<StoredGrant | undefined>;
  /**
   * Revokes a grant and every grant delegated from it; answers the ids newly or already revoked
   * (an earlier revocation keeps its time and reason). An unknown id is NOT_FOUND.
   */
  revokeGrant(id: string, reason: string, at: number): Promise<string[]>;
  /** True when any of these grant ids (a grant and its ancestors) is revoked. */
  anyRevoked(ids: readonly string[]): Promise<boolean>;
  /**
   * Deletes the grants that expired before `before` (Unix seconds) and answers how many. A grant
   * that is an ancestor of a grant kept (one expiring at or after `before`) is kept too, with its
   * revocation state, so a still-valid grant's chain is still checked for revocation.
   */
  pruneGrants(before: number): Promise<number>;
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
}

/** The decisions Charter made, recorded before it answers. */
export interface DecisionStore {
  /**
   * The commit step of one decision, atomically (one transaction) — issue 8 will add budget
   * consumption and approval consumption to this same unit of work. Idempotent by decisionId:
   * the same record again is a no-op, other content under the same id is a CONFLICT.
   */
  commitDecision(record: DecisionRecord): Promise<void>;
  /** The recorded decision, for tests and `charter` tooling. */
  getDecision(decisionId: string): Promise<DecisionRecord | undefined>;
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
  /** Whether any key is unrevoked: without one, the server runs in protected mode. */
  hasActiveApiKey(): Promise<boolean>;
}

/** Everything Charter persists, behind one port with one adapter per database. */
export interface Store extends GrantStore, KeyStore, DecisionStore, ApiKeyStore {
  /**
   * Resolves when the store is still the one opened and can answer; fails UNAVAILABLE once it
   * cannot (closed, or a SQLite file deleted, replaced or truncated under the process). The server
   * asks before every RPC, so even an RPC that needs no stored data fails closed.
   */
  checkIntact(): Promise<void>;
  /** Closes connections (a second close is harmless); later calls fail with UNAVAILABLE. */
  close(): Promise<void>;
}
