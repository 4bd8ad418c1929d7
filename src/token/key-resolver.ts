import { importJWK, type CryptoKey } from "jose";
import type { Jwks } from "./signing-key.js";

/** Finds the public key a token's `kid` header names. Only EdDSA keys are ever answered. */
export interface KeyResolver {
  /**
   * The verification key for `kid`, or undefined when the kid is not known. `now` (Unix seconds)
   * lets a resolver bound how often an unknown kid may trigger a reload.
   */
  resolveKey(kid: string, now: number): Promise<CryptoKey | undefined>;
}

const KEY_BYTES = /^[A-Za-z0-9_-]{43}$/;

/**
 * A resolver over a published JWKS, for tool services that verify offline. Entries that are not
 * Ed25519 signing keys with a kid (and an `alg` of EdDSA and `use` of sig when they say) are
 * ignored. The JWKS is read now (a later change to the object is not seen: make a new resolver
 * for a new JWKS); each key is imported once per resolver, when first asked for. Keep the
 * resolver to verify many tokens against the same keys.
 */
export function jwksKeyResolver(jwks: Jwks): KeyResolver {
  const imported = new Map<string, Promise<CryptoKey | undefined>>();
  const entries = new Map<string, string>();
  for (const jwk of Array.isArray(jwks.keys) ? (jwks.keys as readonly unknown[]) : []) {
    const x = usableX(jwk);
    const kid = (jwk as { kid?: unknown }).kid;
    if (x !== undefined && typeof kid === "string" && !entries.has(kid)) entries.set(kid, x);
  }
  return {
    resolveKey(kid) {
      const x = entries.get(kid);
      if (x === undefined) return Promise.resolve(undefined);
      let key = imported.get(kid);
      if (!key) {
        key = importJWK({ kty: "OKP", crv: "Ed25519", x }, "EdDSA").then(
          (k) => k,
          () => undefined,
        );
        imported.set(kid, key);
      }
      return key;
    },
  };
}

function usableX(jwk: unknown): string | undefined {
  if (typeof jwk !== "object" || jwk === null) return undefined;
  const { kty, crv, x, alg, use } = jwk as Record<string, unknown>;
  if (kty !== "OKP" || crv !== "Ed25519" || typeof x !== "string" || !KEY_BYTES.test(x))
    return undefined;
  if ((alg !== undefined && alg !== "EdDSA") || (use !== undefined && use !== "sig"))
    return undefined;
  return x;
}
