import type { TaskGrant } from "../core/grant.js";
import type { GrantStore } from "../store/port.js";
import type { GrantVerifier } from "../token/index.js";

/** A presented grant token, checked: verified, in its time window, and neither it nor an ancestor revoked. */
export type GrantCheck =
  | { readonly ok: true; readonly grant: TaskGrant }
  | { readonly ok: false; readonly code: "GRANT_INVALID" | "GRANT_EXPIRED" | "GRANT_REVOKED"; readonly message: string };

/** Verifies a token (cached), then asks the store whether the grant or any ancestor is revoked. */
export async function checkGrantToken(
  ctx: { readonly verifier: GrantVerifier; readonly store: Pick<GrantStore, "anyRevoked"> },
  token: string,
  now: number,
): Promise<GrantCheck> {
  if (token === "") return { ok: false, code: "GRANT_INVALID", message: "No grant token was presented." };
  const verified = await ctx.verifier.verify(token, now);
  if (!verified.ok) return { ok: false, code: verified.code, message: verified.message };
  const grant = verified.grant;
  if (await ctx.store.anyRevoked([...grant.chain, grant.id])) {
    return { ok: false, code: "GRANT_REVOKED", message: "This task's grant has been revoked. Stop making tool calls and report back." };
  }
  return { ok: true, grant };
}
