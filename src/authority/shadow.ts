import type { TaskGrant } from "../core/grant.js";
import type { Policy } from "../core/policy.js";
import { recompose } from "../core/replay.js";
import {
  shadowGrantOf,
  type ShadowFlip,
  type ShadowGrant,
  type ShadowReasonCode,
} from "../core/shadow-policy.js";
import type { DecisionRecord } from "../store/port.js";
import type { AuthorityContext, PolicySet } from "./context.js";
import { originLinks } from "./grant-origins.js";

// Shadow policies in the application layer: the presented grant recomposed under the candidate
// once per grant and pair (the context's cache), and what a decision record says of the shadow.

/**
 * The grant recomposed under the pair's shadow policy, from the context's cache (made once per
 * grant id and pair): from the recorded origins of its chain, as `charter replay` makes it again
 * (`recompose`), and by `shadowGrantOf` from the grant's own fields only for a grant issued
 * before origins were recorded. `ancestors`: the grant's ancestors as the load step read them.
 */
export async function shadowGrantFor(
  ctx: Pick<AuthorityContext, "caches" | "store">,
  policySet: PolicySet,
  shadow: Policy,
  grant: TaskGrant,
  ancestors: readonly TaskGrant[],
): Promise<ShadowGrant> {
  const cache = ctx.caches.shadowGrants(policySet);
  const cached = cache.get(grant.id);
  if (cached !== undefined) return cached;
  const links = await originLinks(ctx, grant, ancestors);
  const made = links && recompose(links, shadow, policySet.catalog);
  const recomposed: ShadowGrant =
    made === undefined || (!made.ok && made.code === "NO_ORIGIN")
      ? shadowGrantOf(grant, policySet.policy, shadow, policySet.catalog)
      : made.ok
        ? { kind: "granted", grant: made.grant }
        : { kind: "refused", code: made.code as ShadowReasonCode, message: made.message };
  cache.set(grant.id, recomposed);
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
