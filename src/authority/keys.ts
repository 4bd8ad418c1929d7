import type { Jwks } from "../token/index.js";
import type { AuthorityContext } from "./context.js";

/** GetJwks: the public keys that verify grant tokens and receipts, retired ones included. */
export function publishedKeys(ctx: Pick<AuthorityContext, "ring">): Jwks {
  return ctx.ring.jwks();
}
