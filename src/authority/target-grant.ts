import type { CallRequest } from "../core/call-request.js";
import type { TaskGrant } from "../core/grant.js";
import type { AuthorityContext } from "./context.js";
import { loadGrant, type GrantCheck } from "./load-grant.js";

/**
 * The grant a start-agent call presents for its sub-agent, loaded as any grant token is
 * (verified, in its time window, neither it nor an ancestor revoked). Undefined when the call
 * presents none or it does not stand: the core then refuses the start (AGENT_NOT_DELEGATED).
 * Whether it was delegated from the calling grant is the core's check (`checkTarget`).
 */
export async function loadDelegatedGrant(
  ctx: AuthorityContext,
  caller: GrantCheck,
  call: CallRequest,
  now: number,
): Promise<TaskGrant | undefined> {
  if (!caller.ok || call.target?.kind !== "start_agent" || !call.delegatedGrantToken)
    return undefined;
  const check = await loadGrant(ctx, call.delegatedGrantToken, now);
  return check.ok ? check.grant : undefined;
}
