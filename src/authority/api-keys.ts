import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { isApproveRole } from "../core/approvers.js";
import type { StoredApiKey } from "../store/port.js";
import type { AuthorityContext } from "./context.js";
import { AuthorityError, invalidRequest } from "./errors.js";

/**
 * The roles a caller's key may hold. `issuer`: IssueGrant, DelegateGrant, RevokeGrant, GetGrant;
 * `gateway`: Authorize, BatchAuthorize, AuthorizeTurn; `approver`: the approvals of grants whose
 * owner is the key's principal; `auditor`: read-only views of records (GetGrant); `admin`: all.
 * Besides these, `approve:<requirement>` (e.g. `approve:manager`): its holder sees and answers
 * the approvals of that requirement, whoever owns them, and only its holders' approvals count
 * for it (`admin` alone approves nothing; see core/approvers.ts).
 */
export const ROLES = ["issuer", "gateway", "approver", "auditor", "admin"] as const;

export type Role = (typeof ROLES)[number] | `approve:${string}`;

/** Who is calling, as established by an API key or a client certificate. */
export interface Principal {
  readonly principal: string;
  readonly roles: readonly Role[];
  /** The local operator of protected mode: anyone on this machine, so no identity of its own (an approval names its approver). */
  readonly protectedMode?: true;
}

/** Every API key secret starts with this, so that secret scanners can find leaked ones. */
export const API_KEY_PREFIX = "chk_";

/** A secret is the prefix and 32 random bytes, base64url: 256 bits nobody can guess. */
const SECRET = /^chk_[A-Za-z0-9_-]{43}$/;

/**
 * The stored form of a secret: SHA-256 (hex) under a domain-separation label. A fast unkeyed hash
 * is enough because the secret is 256 random bits (a slow password hash protects guessable
 * secrets, and would cost milliseconds on every call); a keyed hash would need a second secret
 * that every replica and the offline CLI share. Lookup is by this hash, then the stored and
 * computed hashes are compared in constant time.
 */
export function apiKeySecretHash(secret: string): string {
  return createHash("sha256").update(`charter-api-key-v1:${secret}`).digest("hex");
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value) || isApproveRole(value);
}

/** A new API key: its record as stored and the secret, which is shown once and never stored. */
export interface CreatedApiKey {
  readonly key: StoredApiKey;
  readonly secret: string;
}

/** Creates an API key for `principal` with `roles`; the answer is the only place the secret appears. */
export async function createApiKey(
  ctx: Pick<AuthorityContext, "store" | "now">,
  req: { readonly principal: string; readonly roles: readonly string[] },
): Promise<CreatedApiKey> {
  if (req.principal.trim() === "") throw invalidRequest("principal", "is required");
  if (req.roles.length === 0)
    throw invalidRequest("roles", `at least one of ${ROLES.join(", ")} is required`);
  const unknown = req.roles.find((r) => !isRole(r));
  if (unknown !== undefined)
    throw invalidRequest(
      "roles",
      `unknown role "${unknown.slice(0, 64)}" (known: ${ROLES.join(", ")}, approve:<requirement>)`,
    );
  const secret = `${API_KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
  const key: StoredApiKey = {
    id: `key_${randomBytes(6).toString("hex")}`,
    principal: req.principal,
    roles: [...new Set(req.roles)].sort(),
    secretHash: apiKeySecretHash(secret),
    createdAt: ctx.now(),
  };
  await ctx.store.createApiKey(key);
  return { key, secret };
}

/** Every API key, revoked ones included (never a secret: only hashes are stored). */
export function listApiKeys(ctx: Pick<AuthorityContext, "store">): Promise<StoredApiKey[]> {
  return ctx.store.listApiKeys();
}

/** Revokes an API key at once: the next call that presents it is UNAUTHENTICATED. */
export async function revokeApiKey(
  ctx: Pick<AuthorityContext, "store" | "now">,
  id: string,
): Promise<void> {
  if (id === "") throw invalidRequest("id", "is required");
  const known = (await ctx.store.listApiKeys()).some((k) => k.id === id);
  if (!known) throw new AuthorityError("NOT_FOUND", `no api key with id "${id.slice(0, 64)}"`);
  await ctx.store.revokeApiKey(id, ctx.now());
}

/**
 * The caller a presented secret belongs to, or undefined for a malformed, unknown or revoked one
 * (one answer for all three, so a caller learns nothing about which). The store is asked on every
 * call, so a revocation takes effect at the next call.
 */
export async function authenticateApiKey(
  ctx: Pick<AuthorityContext, "store">,
  secret: string,
): Promise<Principal | undefined> {
  if (!SECRET.test(secret)) return undefined;
  const hash = apiKeySecretHash(secret);
  const key = await ctx.store.findApiKeyByHash(hash);
  if (key === undefined || key.revokedAt !== undefined) return undefined;
  if (!timingSafeEqual(Buffer.from(key.secretHash, "hex"), Buffer.from(hash, "hex")))
    return undefined;
  return { principal: key.principal, roles: key.roles.filter(isRole) };
}

/** Whether the deployment has any caller credential: without one, the server is in protected mode. */
export function hasApiKeys(ctx: Pick<AuthorityContext, "store">): Promise<boolean> {
  return ctx.store.hasActiveApiKey();
}
