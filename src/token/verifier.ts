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
}

/** What the verifier has done so far; for tests and metrics. */
export interface GrantVerifierStats {
  /** Full verifications (signature included) performed. */
  readonly signatureVerifications: number;
  /** Verifications answered from the cache. */
  readonly cacheHits: number;
  /** Tokens currently cached. */
  readonly size: number;
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
 * A verifier with a bounded LRU of verified grants keyed by the sha256 of the token (the raw
 * bearer token is not kept). Only tokens that verified are cached; a refused one is checked in
 * full again next time. Keys are never removed from a ring, so a cached signature stays valid.
 */
export function createGrantVerifier(keys: KeyResolver, options: GrantVerifierOptions): GrantVerifier {
  const cache = new LruCache<string, TaskGrant>(options.maxEntries ?? DEFAULT_VERIFIER_ENTRIES);
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
      if (digest !== undefined) cache.set(digest, grant);
      return { ok: true, grant };
    },
    stats() {
      return { signatureVerifications, cacheHits, size: cache.size };
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
