import { SignJWT } from "jose";
import type { KeyRing } from "./key-ring.js";
import type { KeyResolver } from "./key-resolver.js";
import { verifyJws } from "./verify-jws.js";

/** The `typ` header of a signed audit checkpoint: neither a grant token nor a receipt. */
export const CHECKPOINT_TYP = "charter-audit-checkpoint+jwt";

/** What a checkpoint states: the audit record `seq` has chain hash `hash`. */
export interface CheckpointClaims {
  readonly seq: number;
  readonly hash: string;
}

/** Signs a checkpoint of the audit chain head (compact JWS, EdDSA): claims `seq`, `hash`, iss, aud, iat. */
export async function signCheckpoint(
  claims: CheckpointClaims,
  ring: KeyRing,
  options: { issuer: string; audience: string; now: number },
): Promise<string> {
  const { kid, privateKey } = ring.signingKey();
  return new SignJWT({ seq: claims.seq, hash: claims.hash })
    .setProtectedHeader({ alg: "EdDSA", kid, typ: CHECKPOINT_TYP })
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setIssuedAt(options.now)
    .sign(privateKey);
}

/** The checkpoint's claims when its signature verifies against `keys`; undefined when it does not. Never throws for a bad token. */
export async function verifyCheckpoint(
  token: string,
  keys: KeyResolver,
  options: { issuer: string; audience: string; now: number },
): Promise<CheckpointClaims | undefined> {
  const outcome = await verifyJws(
    token,
    keys,
    {
      typ: CHECKPOINT_TYP,
      issuer: options.issuer,
      audience: options.audience,
      now: options.now,
      clockToleranceSeconds: 0,
      requiredClaims: ["seq", "hash", "iat"],
    },
    "audit checkpoint",
  );
  if (!outcome.ok) return undefined;
  const { seq, hash } = outcome.payload;
  return typeof seq === "number" && typeof hash === "string" ? { seq, hash } : undefined;
}
