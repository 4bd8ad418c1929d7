import type { TaskGrant } from "../core/grant.js";
import type { Policy } from "../core/policy.js";
import { shadowGrantOf, type ShadowFlip, type ShadowGrant } from "../core/shadow-policy.js";
import type { DecisionRecord } from "../store/port.js";
import type { AuthorityContext, PolicySet } from "./context.js";

// Shadow policies in the application layer: the presented grant recomposed under the candidate
// once per grant and pair (the context's cache), and what a decision record says of the shadow.

/** The grant recomposed under the pair's shadow policy, from the context's cache (made once per grant id and pair). */
export function shadowGrantFor(
  ctx: Pick<AuthorityContext, "caches">,
  policySet: PolicySet,
  shadow: Policy,
  grant: TaskGrant,
): ShadowGrant {
  const cache = ctx.caches.shadowGrants(policySet);
  let recomposed = cache.get(grant.id);
  if (recomposed === undefined) {
    recomposed = shadowGrantOf(grant, policySet.policy, shadow, policySet.catalog);
    cache.set(grant.id, recomposed);
  }
  return recomposed;
}

/** The record with the shadow policy's version and, when the candidate disagreed, its flip. */
export function withShadow(
  record: DecisionRecord,
  shadowPolicyVersion: string,
  flip: ShadowFlip | undefined,
): DecisionRecord {
  return {
    ...record,
    shadowPolicyVersion,
    ...(flip === undefined ? {} : { shadowFlip: flip }),
  };
}
