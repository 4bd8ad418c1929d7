import { sign } from "node:crypto";
import type { JWTPayload } from "jose";
import { CompactSigner } from "./compact-signer.js";
import { TokenError } from "./errors.js";
import type { KeyRing, SigningKey } from "./key-ring.js";
import { jwksKeyResolver, type KeyResolver } from "./key-resolver.js";
import type { Jwks } from "./signing-key.js";
import { verifyJws } from "./verify-jws.js";

/** The `typ` header of a decision receipt; a grant token is not a receipt, nor the reverse. */
export const RECEIPT_TYP = "charter-receipt+jwt";
export const DEFAULT_RECEIPT_TTL_SECONDS = 300;

/** What an allow decision binds, so that a tool service can check the call it is about to run. */
export interface ReceiptClaims {
  /** The decision id, as written to the audit log (the receipt's `jti`). */
  readonly decisionId: string;
  readonly grantId: string;
  /** The agent that made the call (the receipt's `sub`). */
  readonly subject: string;
  readonly actionId: string;
  /** The tool name the model used ("" for an action without a tool). */
  readonly toolName: string;
  /** The resolved resource, when the action has a resource template. */
  readonly resource?: string;
  readonly callId: string;
  /** The verdict's call digest: sha256 over the canonical {grant id, action id, arguments}. */
  readonly argsDigest: string;
  /**
   * sha256 (lower-case hex) over the RFC 8785 canonical text of the arguments decided on: a tool
   * service canonicalizes the arguments it received and compares, so it runs exactly what was decided.
   */
  readonly argumentsDigest: string;
  readonly catalogVersion: string;
  /** The run the call was decided in, when it carries one (`run_id`). */
  readonly runId?: string;
  /** The labels that run had seen when the call was decided (`run_labels`), with `runId`. */
  readonly runLabels?: readonly string[];
}

/** A verified receipt: its claims and its validity window (Unix seconds). */
export interface Receipt extends ReceiptClaims {
  readonly issuedAt: number;
  readonly expiresAt: number;
}

/** How to sign a receipt: the parties, the time (Unix seconds) and a lifetime (default 300 s). */
export interface ReceiptSignOptions {
  readonly issuer: string;
  readonly audience: string;
  readonly now: number;
  readonly ttlSeconds?: number;
}

/** What a receipt verification checks against. */
export interface ReceiptCheck {
  readonly issuer: string;
  readonly audience: string;
  readonly now: number;
  /** Seconds of clock skew allowed on `exp` (default 0), for tool services on other hosts. */
  readonly clockToleranceSeconds?: number;
}

/** The receipt, or why it is refused (the message never echoes the token). */
export type ReceiptResult =
  | { readonly ok: true; readonly receipt: Receipt }
  | {
      readonly ok: false;
      readonly code: "RECEIPT_INVALID" | "RECEIPT_EXPIRED";
      readonly message: string;
    };

/** JWT claim names of the receipt's private claims, beside jti (decisionId) and sub (subject). */
const CLAIM = {
  grantId: "grant_id",
  actionId: "action_id",
  toolName: "tool_name",
  resource: "resource",
  callId: "call_id",
  argsDigest: "args_digest",
  argumentsDigest: "arguments_digest",
  catalogVersion: "catalog_version",
  runId: "run_id",
  runLabels: "run_labels",
} as const;
const REQUIRED = [
  "decisionId",
  "grantId",
  "subject",
  "actionId",
  "argsDigest",
  "argumentsDigest",
] as const;
const STRINGS = [...REQUIRED, "toolName", "callId", "catalogVersion"] as const;

/**
 * Signs a short-lived receipt for an allowed call: a compact JWS (EdDSA, typ
 * charter-receipt+jwt) with iss, aud, sub, jti, iat, exp and the private claims grant_id,
 * action_id, tool_name, resource (when there is one), call_id, args_digest, arguments_digest and
 * catalog_version.
 */
export async function signReceipt(
  claims: ReceiptClaims,
  ring: KeyRing,
  options: ReceiptSignOptions,
): Promise<string> {
  const ttl = options.ttlSeconds ?? DEFAULT_RECEIPT_TTL_SECONDS;
  if (!(Number.isSafeInteger(ttl) && ttl > 0))
    throw new TokenError("INVALID_INPUT", "a receipt's ttlSeconds must be a positive integer");
  if (!Number.isSafeInteger(options.now))
    throw new TokenError("INVALID_INPUT", "a receipt's issue time must be an integer");
  const problem = claimsProblem(claims as unknown as Record<string, unknown>);
  if (problem !== undefined)
    throw new TokenError("INVALID_INPUT", `cannot sign a receipt: ${problem}`);
  const payload: JWTPayload = {
    [CLAIM.grantId]: claims.grantId,
    [CLAIM.actionId]: claims.actionId,
    [CLAIM.toolName]: claims.toolName,
    ...(claims.resource === undefined ? {} : { [CLAIM.resource]: claims.resource }),
    [CLAIM.callId]: claims.callId,
    [CLAIM.argsDigest]: claims.argsDigest,
    [CLAIM.argumentsDigest]: claims.argumentsDigest,
    [CLAIM.catalogVersion]: claims.catalogVersion,
    ...(claims.runId === undefined
      ? {}
      : { [CLAIM.runId]: claims.runId, [CLAIM.runLabels]: [...(claims.runLabels ?? [])] }),
  };
  const signingKey = ring.signingKey();
  const claimsSet: JWTPayload = {
    ...payload,
    iss: options.issuer,
    aud: options.audience,
    sub: claims.subject,
    jti: claims.decisionId,
    iat: options.now,
    exp: options.now + ttl,
  };
  return signCompact(claimsSet, signingKey);
}

/**
 * The compact JWS jose's `SignJWT` produces for these claims (header `{alg, kid, typ}`, the
 * claims' JSON, base64url without padding), byte for byte — Ed25519 is deterministic — signed
 * with node's `crypto.sign` on the key object and header the ring's `CompactSigner` made once
 * with the key (a rotation brings a new one; the old goes with its key). The signature is
 * computed on libuv's thread pool (the callback form of `crypto.sign`), so the event loop serves
 * other calls meanwhile; with the direct call that is about a quarter of SignJWT's cost on the
 * event loop per receipt (docs/architecture.md, "Receipts").
 */
function signCompact(claimsSet: JWTPayload, signingKey: SigningKey): Promise<string> {
  const signer = signingKey.compact ?? new CompactSigner(signingKey.kid, signingKey.privateKey);
  const signingInput = `${signer.header(RECEIPT_TYP)}.${Buffer.from(JSON.stringify(claimsSet)).toString("base64url")}`;
  const key = signer.key;
  return new Promise((resolve, reject) =>
    sign(null, Buffer.from(signingInput), key, (err, signature) =>
      err ? reject(err) : resolve(`${signingInput}.${signature.toString("base64url")}`),
    ),
  );
}

/**
 * Verifies a receipt against Charter's key ring or its published JWKS: only EdDSA, only a known
 * kid, typ, issuer, audience, expiry at `now` and the claims' types. Never throws for a bad token.
 * Given a JWKS, its keys are imported for this call: to verify many receipts, make a resolver
 * once with `jwksKeyResolver(jwks)` and pass that.
 */
export async function verifyReceipt(
  token: string,
  keys: KeyResolver | Jwks,
  check: ReceiptCheck,
): Promise<ReceiptResult> {
  const resolver = "resolveKey" in keys ? keys : jwksKeyResolver(keys);
  const outcome = await verifyJws(
    token,
    resolver,
    {
      typ: RECEIPT_TYP,
      issuer: check.issuer,
      audience: check.audience,
      now: check.now,
      clockToleranceSeconds: check.clockToleranceSeconds ?? 0,
      requiredClaims: [
        "sub",
        "jti",
        "iat",
        "exp",
        CLAIM.grantId,
        CLAIM.actionId,
        CLAIM.toolName,
        CLAIM.callId,
        CLAIM.argsDigest,
        CLAIM.argumentsDigest,
        CLAIM.catalogVersion,
      ],
    },
    "receipt",
  );
  if (!outcome.ok)
    return {
      ok: false,
      code: outcome.expired ? "RECEIPT_EXPIRED" : "RECEIPT_INVALID",
      message: outcome.message,
    };
  const p = outcome.payload;
  const resource = p[CLAIM.resource];
  const runId = p[CLAIM.runId];
  const runLabels = p[CLAIM.runLabels];
  const receipt = {
    decisionId: p.jti,
    grantId: p[CLAIM.grantId],
    subject: p.sub,
    actionId: p[CLAIM.actionId],
    toolName: p[CLAIM.toolName],
    ...(resource === undefined ? {} : { resource }),
    callId: p[CLAIM.callId],
    argsDigest: p[CLAIM.argsDigest],
    argumentsDigest: p[CLAIM.argumentsDigest],
    catalogVersion: p[CLAIM.catalogVersion],
    ...(runId === undefined ? {} : { runId, runLabels }),
    issuedAt: p.iat,
    expiresAt: p.exp,
  };
  const problem = claimsProblem(receipt);
  if (problem !== undefined)
    return { ok: false, code: "RECEIPT_INVALID", message: `the receipt is malformed: ${problem}` };
  return { ok: true, receipt: receipt as Receipt };
}

function claimsProblem(claims: Record<string, unknown>): string | undefined {
  for (const key of STRINGS) if (typeof claims[key] !== "string") return `${key} must be a string`;
  for (const key of REQUIRED) if (claims[key] === "") return `${key} must not be empty`;
  if (claims["resource"] !== undefined && typeof claims["resource"] !== "string")
    return "resource must be a string";
  if (claims["runId"] !== undefined) {
    const labels = claims["runLabels"];
    if (typeof claims["runId"] !== "string" || claims["runId"] === "")
      return "run_id must be a non-empty string";
    if (!Array.isArray(labels) || !labels.every((l) => typeof l === "string"))
      return "run_labels must be a list of strings";
  } else if (claims["runLabels"] !== undefined) return "run_labels needs run_id";
  return undefined;
}
