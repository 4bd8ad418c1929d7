import { errors, jwtVerify, type CryptoKey, type JWTHeaderParameters, type JWTPayload } from "jose";
import type { KeyResolver } from "./key-resolver.js";

/** Tokens longer than this are refused before any parsing (a grant with large schemas fits easily). */
export const MAX_TOKEN_LENGTH = 256 * 1024;

/** What a token must be to verify: its typ, issuer, audience and time window at `now`. */
export interface JwsExpectations {
  readonly typ: string;
  readonly issuer: string;
  readonly audience: string;
  /** Unix seconds. */
  readonly now: number;
  /** Seconds of clock skew allowed on `nbf` and `exp`. */
  readonly clockToleranceSeconds: number;
  /** Claims that must be present besides iss and aud. */
  readonly requiredClaims: readonly string[];
}

/** A verified token's claims, or why it is refused: `expired` covers "not yet valid" too. */
export type JwsOutcome =
  | { readonly ok: true; readonly payload: JWTPayload; readonly header: JWTHeaderParameters }
  | { readonly ok: false; readonly expired: boolean; readonly message: string };

/** Claim names a refusal message may name; anything else is reported without its name. */
const NAMED_CLAIMS = new Set(["iss", "aud", "sub", "jti", "iat", "nbf", "exp", "typ"]);

/**
 * Verifies a compact JWS signed by Charter: only EdDSA, only a kid the resolver knows, then typ,
 * issuer, audience and the time window. Never throws for a bad token, and no message echoes any
 * part of it. Only jose's refusals of the token (and an unknown kid) are refusals: anything else
 * (a StoreError or TokenError raised while resolving the key, a bug) is rethrown, since it means
 * "could not decide", not "the caller's token is bad".
 */
export async function verifyJws(
  token: unknown,
  keys: KeyResolver,
  want: JwsExpectations,
  what: string,
): Promise<JwsOutcome> {
  if (typeof token !== "string" || token === "") return refuse(`no ${what} was presented`);
  if (token.length > MAX_TOKEN_LENGTH) return refuse(`the ${what} is too large`);
  if (!isCanonicalCompact(token))
    return refuse(`the ${what} is malformed (not canonical base64url)`);
  const getKey = async (header: JWTHeaderParameters): Promise<CryptoKey> => {
    const key =
      header.alg === "EdDSA" && typeof header.kid === "string"
        ? await keys.resolveKey(header.kid, want.now)
        : undefined;
    if (!key) throw new UnknownKey();
    return key;
  };
  try {
    const { payload, protectedHeader } = await jwtVerify(token, getKey, {
      algorithms: ["EdDSA"],
      typ: want.typ,
      issuer: want.issuer,
      audience: want.audience,
      requiredClaims: [...want.requiredClaims],
      currentDate: new Date(want.now * 1000),
      clockTolerance: want.clockToleranceSeconds,
    });
    return { ok: true, payload, header: protectedHeader };
  } catch (err) {
    if (err instanceof UnknownKey) return refuse(`the ${what} is not signed by a known key`);
    if (!isTokenRefusal(err)) throw err;
    return explain(err, what);
  }
}

/**
 * Whether a compact JWS is three base64url parts each spelled exactly as its bytes encode (no
 * padding, no set spare bits, no other characters). Decoders accept several spellings of the same
 * bytes; only the canonical one is accepted, so a token has one spelling and one cache key.
 */
export function isCanonicalCompact(token: string): boolean {
  const parts = token.split(".");
  return (
    parts.length === 3 &&
    parts.every(
      (part) =>
        BASE64URL.test(part) && Buffer.from(part, "base64url").toString("base64url") === part,
    )
  );
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The token names no key the resolver knows (or an algorithm other than EdDSA). */
class UnknownKey extends Error {}

/**
 * jose's errors that refuse the token itself: malformed (JWSInvalid, JWTInvalid), a `crit`
 * extension jose does not implement (JOSENotSupported), a disallowed algorithm, a bad signature,
 * failed or expired claims. Key and key-set errors (JWKInvalid, JWKS*) and JWE errors are not
 * among them: they mean Charter could not check the token, not that the token is bad.
 */
const TOKEN_REFUSALS = [
  errors.JWSInvalid,
  errors.JWTInvalid,
  errors.JOSENotSupported,
  errors.JOSEAlgNotAllowed,
  errors.JWSSignatureVerificationFailed,
  errors.JWTClaimValidationFailed,
  errors.JWTExpired,
] as const;

type TokenRefusal = InstanceType<(typeof TOKEN_REFUSALS)[number]>;

function isTokenRefusal(err: unknown): err is TokenRefusal {
  return TOKEN_REFUSALS.some((refusal) => err instanceof refusal);
}

function explain(err: TokenRefusal, what: string): JwsOutcome {
  if (err instanceof errors.JWTExpired)
    return { ok: false, expired: true, message: `the ${what} has expired` };
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "nbf")
      return { ok: false, expired: true, message: `the ${what} is not yet valid` };
    if (err.claim === "typ") return refuse(`the token is not a ${what} (wrong typ)`);
    if (err.claim === "iss") return refuse(`the ${what} was issued by another issuer`);
    if (err.claim === "aud") return refuse(`the ${what} is meant for another audience`);
    const claim = NAMED_CLAIMS.has(err.claim) ? `"${err.claim}" claim` : "claim";
    return refuse(
      err.reason === "missing"
        ? `the ${what} lacks a ${claim}`
        : `the ${what} has an invalid ${claim}`,
    );
  }
  if (err instanceof errors.JOSEAlgNotAllowed)
    return refuse(`the ${what}'s algorithm is not allowed`);
  if (err instanceof errors.JWSSignatureVerificationFailed)
    return refuse(`the ${what}'s signature does not verify`);
  return refuse(`the ${what} is malformed`);
}

function refuse(message: string): JwsOutcome {
  return { ok: false, expired: false, message };
}
