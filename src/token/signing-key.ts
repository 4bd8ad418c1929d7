import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type CryptoKey,
} from "jose";
import type { StoredKey } from "../store/port.js";
import { TokenError } from "./errors.js";

/** A published Ed25519 verification key (RFC 8037). It never carries a private member. */
export interface PublicJwk {
  readonly kty: "OKP";
  readonly crv: "Ed25519";
  /** The public key, base64url without padding. */
  readonly x: string;
  /** The RFC 7638 thumbprint of the key, matched against a token's `kid` header. */
  readonly kid: string;
  readonly alg: "EdDSA";
  readonly use: "sig";
}

/** A JSON Web Key Set of Charter's verification keys, as KeyService.GetJwks serves it. */
export interface Jwks {
  readonly keys: readonly PublicJwk[];
}

/** A stored key checked and made usable for verification. */
export interface LoadedKey {
  readonly kid: string;
  readonly jwk: PublicJwk;
  readonly publicKey: CryptoKey;
  readonly stored: StoredKey;
}

/** An Ed25519 coordinate or private scalar: 32 bytes, base64url without padding. */
const KEY_BYTES = /^[A-Za-z0-9_-]{43}$/;

/** The published form of an Ed25519 public key. */
export function publicJwkOf(x: string, kid: string): PublicJwk {
  return { kty: "OKP", crv: "Ed25519", x, kid, alg: "EdDSA", use: "sig" };
}

/** The RFC 7638 thumbprint (sha256, base64url) of an Ed25519 public key. */
export function thumbprintOf(x: string): Promise<string> {
  return calculateJwkThumbprint({ kty: "OKP", crv: "Ed25519", x });
}

/** Generates a fresh Ed25519 key pair as the store keeps it, created at `now`. */
export async function generateStoredKey(now: number): Promise<StoredKey> {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const { x, d } = await exportJWK(privateKey);
  if (typeof x !== "string" || typeof d !== "string")
    throw new TokenError("KEY_INVALID", "the generated key could not be exported");
  const kid = await thumbprintOf(x);
  return {
    kid,
    alg: "EdDSA",
    publicJwk: JSON.stringify(publicJwkOf(x, kid)),
    privateJwk: JSON.stringify({ kty: "OKP", crv: "Ed25519", x, d }),
    createdAt: now,
  };
}

/** Checks a stored key (algorithm, JWK shape, kid = thumbprint) and imports its public half. */
export async function loadStoredKey(stored: StoredKey): Promise<LoadedKey> {
  const x = okpMember(parseJwk(stored, stored.publicJwk, "public"), "x", stored.kid);
  // The type says EdDSA; a row read from the store may say otherwise.
  if ((stored.alg as string) !== "EdDSA")
    throw keyInvalid(stored.kid, "its algorithm is not EdDSA");
  if ((await thumbprintOf(x)) !== stored.kid)
    throw keyInvalid(stored.kid, "its kid is not the thumbprint of its public key");
  const jwk = publicJwkOf(x, stored.kid);
  const publicKey = await importKey(stored.kid, { kty: "OKP", crv: "Ed25519", x });
  return { kid: stored.kid, jwk, publicKey, stored };
}

/** Imports the private half of a stored key (not extractable); the pair must match. */
export async function importPrivateKey(stored: StoredKey): Promise<CryptoKey> {
  const jwk = parseJwk(stored, stored.privateJwk, "private");
  const x = okpMember(jwk, "x", stored.kid);
  const d = okpMember(jwk, "d", stored.kid);
  if ((await thumbprintOf(x)) !== stored.kid)
    throw keyInvalid(stored.kid, "its private key does not belong to its kid");
  return importKey(stored.kid, { kty: "OKP", crv: "Ed25519", x, d });
}

function parseJwk(stored: StoredKey, text: string, half: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw keyInvalid(stored.kid, `its ${half} JWK is not JSON`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw keyInvalid(stored.kid, `its ${half} JWK is not an object`);
  const jwk = value as Record<string, unknown>;
  if (jwk["kty"] !== "OKP" || jwk["crv"] !== "Ed25519")
    throw keyInvalid(stored.kid, `its ${half} JWK is not an Ed25519 key`);
  return jwk;
}

function okpMember(jwk: Record<string, unknown>, name: "x" | "d", kid: string): string {
  const value = jwk[name];
  if (typeof value !== "string" || !KEY_BYTES.test(value))
    throw keyInvalid(kid, `its JWK member "${name}" is not 32 base64url bytes`);
  return value;
}

async function importKey(
  kid: string,
  jwk: { kty: "OKP"; crv: "Ed25519"; x: string; d?: string },
): Promise<CryptoKey> {
  try {
    return await importJWK(jwk, "EdDSA", { extractable: false });
  } catch (cause) {
    throw new TokenError("KEY_INVALID", `stored key ${kid} cannot be imported`, { cause });
  }
}

function keyInvalid(kid: string, why: string): TokenError {
  return new TokenError("KEY_INVALID", `stored key ${kid} is unusable: ${why}`);
}
