import type { Jwks } from "../token/index.js";
import type { AuthorityContext } from "./context.js";

/** GetJwks: the public keys that verify grant tokens and receipts, retired ones included. */
export function publishedKeys(ctx: Pick<AuthorityContext, "ring">): Jwks {
  return ctx.ring.jwks();
}

/**
 * A new signing key: it signs from now on; the keys it replaces are retired (tokens they signed
 * verify until they expire, and they stay in the JWKS). Answers the new kid. A server on the same
 * store picks the new key up at its next key reload (every 30 s, or at once on SIGHUP).
 */
export function rotateSigningKey(ctx: Pick<AuthorityContext, "ring" | "now">): Promise<string> {
  return ctx.ring.rotate(ctx.now());
}
