import { hash } from "node:crypto";
import type { TaskGrant } from "../core/grant.js";
import { grantIndex } from "../core/grant-index.js";
import { deepFreeze } from "../core/json.js";
import { GrantInterner } from "./grant-interner.js";
import { verifyGrantToken, type GrantTokenParties, type GrantTokenResult } from "./grant-token.js";
import type { KeyResolver } from "./key-resolver.js";
import { LruCache } from "./lru-cache.js";
import { MAX_TOKEN_LENGTH } from "./verify-jws.js";

/** How a grant verifier is set up. */
export interface GrantVerifierOptions extends GrantTokenParties {
  /** How many verified tokens to remember (default 10,000); 0 disables the cache. */
  readonly maxEntries?: number;
  /**
   * The memory the remembered grants may take (default 64 MiB), together with what they share: an
   * eighth of it at most for the ids and caveat records many grants hold alike (`GrantInterner`),
   * the rest for the grants' own parts; 0 disables the cache.
   */
  readonly maxBytes?: number;
}

export const DEFAULT_VERIFIER_BYTES = 64 * 1024 * 1024;

/** The part of the byte budget the shared ids and caveat records may take. */
export const SHARED_BYTES_FRACTION = 1 / 8;

/** What the verifier has done so far; for tests and metrics. */
export interface GrantVerifierStats {
  /** Full verifications (signature included) performed. */
  readonly signatureVerifications: number;
  /** Verifications answered from the cache. */
  readonly cacheHits: number;
  /** Tokens currently cached. */
  readonly size: number;
  /** Bytes the cached grants are counted as, their shared ids and caveat records included. */
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
export function createGrantVerifier(
  keys: KeyResolver,
  options: GrantVerifierOptions,
): GrantVerifier {
  const budget = options.maxBytes ?? DEFAULT_VERIFIER_BYTES;
  const shared = Math.floor(budget * SHARED_BYTES_FRACTION);
  const interner = new GrantInterner(shared);
  const sizes = new WeakMap<TaskGrant, number>();
  const cache = new LruCache<string, TaskGrant>(options.maxEntries ?? DEFAULT_VERIFIER_ENTRIES, {
    maxBytes: budget - shared,
    sizeOf: (grant) => sizes.get(grant) ?? 0,
  });
  const parties: GrantTokenParties = { issuer: options.issuer, audience: options.audience };
  let signatureVerifications = 0;
  let cacheHits = 0;
  return {
    async verify(token, now) {
      const cacheable = typeof token === "string" && token.length <= MAX_TOKEN_LENGTH;
      const digest = cacheable ? hash("sha256", token, "base64url") : undefined;
      const cached = digest === undefined ? undefined : cache.get(digest);
      if (cached) {
        cacheHits += 1;
        if (now >= cached.expiresAt) {
          cache.delete(digest as string);
          return { ok: false, code: "GRANT_EXPIRED", message: "the grant token has expired" };
        }
        if (now < cached.issuedAt)
          return { ok: false, code: "GRANT_EXPIRED", message: "the grant token is not yet valid" };
        return { ok: true, grant: cached };
      }
      signatureVerifications += 1;
      const result = await verifyGrantToken(token, keys, { ...parties, now });
      if (!result.ok) return result;
      if (digest === undefined || cache.max === 0 || budget === 0)
        return { ok: true, grant: deepFreeze(result.grant) };
      // What is kept is what is derived: the grant with its ids and caveats shared, and its index.
      const { grant, bytes } = interner.compact(result.grant);
      grantIndex(grant);
      sizes.set(grant, bytes);
      cache.set(digest, grant);
      return { ok: true, grant };
    },
    stats() {
      return {
        signatureVerifications,
        cacheHits,
        size: cache.size,
        bytes: cache.bytes + interner.bytes,
      };
    },
  };
}
