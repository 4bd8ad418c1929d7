import { SignJWT } from "jose";
import type { TaskGrant } from "../core/grant.js";
import { grantShapeProblem } from "../core/grant-shape.js";
import type { ReasonCode } from "../core/verdict.js";
import { TokenError } from "./errors.js";
import type { KeyRing } from "./key-ring.js";
import type { KeyResolver } from "./key-resolver.js";
import { verifyJws } from "./verify-jws.js";

/** The `typ` header of a grant token; a token of any other typ (a receipt) is not a grant. */
export const GRANT_TOKEN_TYP = "charter-grant+jwt";

/**
 * Grant tokens are checked with no clock tolerance: Charter verifies the tokens it issued, on
 * replicas that share a clock (NTP), and the window is exactly the one `decide` applies:
 * valid from `issuedAt` (inclusive) until `expiresAt` (exclusive).
 */
export const GRANT_CLOCK_TOLERANCE_SECONDS = 0;

/** Who issues grant tokens and who they are for. */
export interface GrantTokenParties {
  readonly issuer: string;
  readonly audience: string;
}

/** What a grant token verification checks against: the parties and the time (Unix seconds). */
export interface GrantTokenCheck extends GrantTokenParties {
  readonly now: number;
}

/** Why a grant token is refused: a code the verdict can carry, and a message that never echoes the token. */
export interface GrantTokenRefusal {
  readonly ok: false;
  readonly code: Extract<ReasonCode, "GRANT_INVALID" | "GRANT_EXPIRED">;
  readonly message: string;
}

/** The grant a token carries, or why it is refused. */
export type GrantTokenResult = { readonly ok: true; readonly grant: TaskGrant } | GrantTokenRefusal;

/**
 * Signs a grant as a compact JWS (EdDSA, the ring's signing kid, typ charter-grant+jwt) whose
 * registered claims mirror the grant: sub = subject, jti = id, iat = nbf = issuedAt,
 * exp = expiresAt; the `grant` claim carries the whole grant. A malformed grant is refused with
 * TokenError INVALID_INPUT rather than signed.
 */
export async function signGrantToken(
  grant: TaskGrant,
  ring: KeyRing,
  parties: GrantTokenParties,
): Promise<string> {
  const problem = grantShapeProblem(grant);
  if (problem !== undefined)
    throw new TokenError("INVALID_INPUT", `cannot sign a malformed grant: ${problem}`);
  const { kid, privateKey } = ring.signingKey();
  return new SignJWT({ grant: grant as unknown as Record<string, unknown> })
    .setProtectedHeader({ alg: "EdDSA", kid, typ: GRANT_TOKEN_TYP })
    .setIssuer(parties.issuer)
    .setAudience(parties.audience)
    .setSubject(grant.subject)
    .setJti(grant.id)
    .setIssuedAt(grant.issuedAt)
    .setNotBefore(grant.issuedAt)
    .setExpirationTime(grant.expiresAt)
    .sign(privateKey);
}

/**
 * Verifies a grant token: signature (EdDSA, a known kid), typ, issuer, audience, the time window
 * at `now`, the shape of the `grant` claim and its agreement with the registered claims.
 * Expired or not yet valid -> GRANT_EXPIRED; anything else -> GRANT_INVALID. It never throws for
 * a bad token; anything that is not a refusal of the token (a StoreError or a TokenError met
 * while reloading keys for an unknown kid, a bug) is rethrown: "could not decide".
 */
export async function verifyGrantToken(
  token: string,
  keys: KeyResolver,
  check: GrantTokenCheck,
): Promise<GrantTokenResult> {
  const outcome = await verifyJws(
    token,
    keys,
    {
      typ: GRANT_TOKEN_TYP,
      issuer: check.issuer,
      audience: check.audience,
      now: check.now,
      clockToleranceSeconds: GRANT_CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ["sub", "jti", "iat", "nbf", "exp", "grant"],
    },
    "grant token",
  );
  if (!outcome.ok)
    return refuse(outcome.expired ? "GRANT_EXPIRED" : "GRANT_INVALID", outcome.message);
  const { payload } = outcome;
  const grant = payload["grant"];
  const problem = grantShapeProblem(grant);
  if (problem !== undefined)
    return refuse("GRANT_INVALID", `the grant token carries a malformed grant: ${problem}`);
  const g = grant as TaskGrant;
  if (payload.jti !== g.id)
    return refuse("GRANT_INVALID", "the grant token's jti is not its grant's id");
  if (payload.sub !== g.subject)
    return refuse("GRANT_INVALID", "the grant token's sub is not its grant's subject");
  if (payload.exp !== g.expiresAt)
    return refuse("GRANT_INVALID", "the grant token's exp is not its grant's expiry");
  if (payload.nbf !== g.issuedAt || payload.iat !== g.issuedAt)
    return refuse("GRANT_INVALID", "the grant token's nbf and iat are not its grant's issue time");
  return { ok: true, grant: g };
}

function refuse(code: GrantTokenRefusal["code"], message: string): GrantTokenRefusal {
  return { ok: false, code, message };
}
