import { createHash } from "node:crypto";
import type { TaskGrant } from "../core/grant.js";
import { verifyGrantToken, type GrantTokenParties, type GrantTokenResult } from "./grant-token.js";
import type { KeyResolver } from "./key-resolver.js";
import { LruCache } from "./lru-cache.js";
import { MAX_TOKEN_LENGTH } from "./verify-jws.js";

/** How a grant verifier is set up. */
export interface GrantVerifierOptions extends GrantTokenParties {
  /** How many verified tokens to remember (default 10,000); 0 disables the cache. */
  readonly maxEntries?: number;
  /** How many bytes the remembered grants may take, counted by `cachedBytes` (default 64 MiB); 0 disables the cache. */
  readonly maxBytes?: number;
}

export const DEFAULT_VERIFIER_BYTES = 64 * 1024 * 1024;

/**
 * What one remembered token is counted as: its parsed, frozen grant takes about twice the token's
 * length (UTF-16 strings, object overhead), plus the key and the entry.
 */
export function cachedBytes(tokenLength: number): number {
  return 2 * tokenLength + 256;
}

/** What the verifier has done so far; for tests and metrics. */
export interface GrantVerifierStats {
  /** Full verifications (signature included) performed. */
  readonly signatureVerifications: number;
  /** Verifications answered from the cache. */
  readonly cacheHits: number;
  /** Tokens currently cached. */
  readonly size: number;
  /** Bytes the cached tokens are counted as. */
  readonly bytes: number;
}

/** Verifies grant tokens, remembering the ones whose signature and claims already checked out. */
export interface GrantVerifier {
  /**
   * Same answer as verifyGrantToken at `now`. A token seen before (and valid then) skips the
   * signature check, but its time window is checked against `now` every time.
   */
  verify(token: string, now: number): Promise<GrantTokenResult>;
  stats(): GrantVerifierStats;
}

export const DEFAULT_VERIFIER_ENTRIES = 10_000;

/**
 * A verifier with an LRU of verified grants keyed by the sha256 of the token (the raw bearer token
 * is not kept), bounded in entries and in bytes. Only tokens that verified are cached; a refused
 * one is checked in full again next time. Keys are canonical: `verifyJws` refuses any token whose
 * base64url is not the canonical encoding of its bytes (padding, spare bits), so one token has
 * exactly one spelling and cannot fill the cache with re-encodings. Keys are never removed from a
 * ring, so a cached signature stays valid.
 */
export function createGrantVerifier(keys: KeyResolver, options: GrantVerifierOptions): GrantVerifier {
  const sizes = new WeakMap<TaskGrant, number>();
  const cache = new LruCache<string, TaskGrant>(options.maxEntries ?? DEFAULT_VERIFIER_ENTRIES, {
    maxBytes: options.maxBytes ?? DEFAULT_VERIFIER_BYTES,
    sizeOf: (grant) => sizes.get(grant) ?? 0,
  });
  const parties: GrantTokenParties = { issuer: options.issuer, audience: options.audience };
  let signatureVerifications = 0;
  let cacheHits = 0;
  return {
    async verify(token, now) {
      const cacheable = typeof token === "string" && token.length <= MAX_TOKEN_LENGTH;
      const digest = cacheable ? createHash("sha256").update(token).digest("base64url") : undefined;
      const cached = digest === undefined ? undefined : cache.get(digest);
      if (cached) {
        cacheHits += 1;
        if (now >= cached.expiresAt) {
          cache.delete(digest as string);
          return { ok: false, code: "GRANT_EXPIRED", message: "the grant token has expired" };
        }
        if (now < cached.issuedAt) return { ok: false, code: "GRANT_EXPIRED", message: "the grant token is not yet valid" };
        return { ok: true, grant: cached };
      }
      signatureVerifications += 1;
      const result = await verifyGrantToken(token, keys, { ...parties, now });
      if (!result.ok) return result;
      const grant = deepFreeze(result.grant);
      if (digest !== undefined) {
        sizes.set(grant, cachedBytes(token.length));
        cache.set(digest, grant);
      }
      return { ok: true, grant };
    },
    stats() {
      return { signatureVerifications, cacheHits, size: cache.size, bytes: cache.bytes };
    },
  };
}

/** Freezes a parsed JSON value all the way down, so that no caller can change a cached grant. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
