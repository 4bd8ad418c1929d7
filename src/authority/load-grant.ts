import type { TaskGrant } from "../core/grant.js";
import type { AuthorityContext } from "./context.js";

/** A presented grant token, checked: verified, in its time window, and neither it nor an ancestor revoked. */
export type GrantCheck =
  { readonly ok: true; readonly grant: TaskGrant } | { readonly ok: false; readonly code: "GRANT_INVALID" | "GRANT_EXPIRED" | "GRANT_REVOKED"; readonly message: string };

/**
 * The load step for a grant token: verify it (the verifier may answer from its cache), then ask
 * the store — on every call, never cached — whether the grant or any ancestor is revoked.
 */
export async function loadGrant(ctx: Pick<AuthorityContext, "verifier" | "store">, token: string, now: number): Promise<GrantCheck> {
  if (token === "") return { ok: false, code: "GRANT_INVALID", message: "No grant token was presented." };
  const verified = await ctx.verifier.verify(token, now);
  if (!verified.ok) return { ok: false, code: verified.code, message: verified.message };
  const grant = verified.grant;
  if (await ctx.store.anyRevoked([...grant.chain, grant.id])) {
    return { ok: false, code: "GRANT_REVOKED", message: "This task's grant has been revoked. Stop making tool calls and report back." };
  }
  return { ok: true, grant };
}
