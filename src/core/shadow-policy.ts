import type { Catalog } from "./catalog.js";
import {
  COMPOSE_DENIAL_CODES,
  compose,
  type ComposeRequest,
  type ComposeResult,
} from "./compose.js";
import { assess, type DecideContext } from "./decide.js";
import { delegate, REFUSAL_CODES } from "./delegate.js";
import { ANY_RUN, type TaskGrant } from "./grant.js";
import type { Policy } from "./policy.js";
import { decidingRule } from "./policy-test-case.js";
import { REASON_CODES, type Decision, type ToolCall } from "./verdict.js";

// Shadow policies (docs/policy-testing.md#shadow-policies): a candidate policy decided beside the
// live one. The grant a call presents was composed under the live policy; `shadowGrantOf` is the
// one place it is recomposed under the candidate, so that it can later be switched to the
// recorded compose request without touching its callers.

/**
 * The codes a flip may name: a verdict's reason code, or why the candidate could not compose the
 * grant at all (`compose`'s denial codes; `delegate`'s refusal codes for a delegated grant).
 */
export const SHADOW_REASON_CODES: readonly ShadowReasonCode[] = Object.freeze(
  [...REASON_CODES, ...COMPOSE_DENIAL_CODES, ...REFUSAL_CODES].filter(
    (code, i, all) => all.indexOf(code) === i,
  ),
);

export type ShadowReasonCode =
  | (typeof REASON_CODES)[number]
  | (typeof COMPOSE_DENIAL_CODES)[number]
  | (typeof REFUSAL_CODES)[number];

/** The grant as the candidate would have issued it, or why the candidate issues none. */
export type ShadowGrant =
  | { readonly kind: "granted"; readonly grant: TaskGrant }
  | { readonly kind: "refused"; readonly code: ShadowReasonCode; readonly message: string };

/**
 * What the candidate decided where it disagrees with the live policy: its verdict (`to`), its
 * reason code and the rule that made it (`ruleRef`), when any. The live verdict is the `from`.
 */
export interface ShadowFlip {
  readonly to: Decision;
  readonly reasonCode?: ShadowReasonCode;
  readonly rule?: string;
}

/**
 * The grant `grant` (composed under `live`) recomposed under `candidate`, against the catalog in
 * force. Pure; the same inputs give the same grant.
 *
 * - A root grant is composed with its profile, subject, owner, purpose, mode, `issuedAt` and
 *   lifetime. Its requested actions are "none asked" (the whole profile) when composing under
 *   the live policy without a request gives the grant's three lists, else its allowed and
 *   approval-required actions.
 * - A delegated grant: the candidate's root grant composed from the delegated grant's own fields
 *   with its allowed and approval-required actions requested, then narrowed to the delegated
 *   grant's lists and caveats with `delegate` (at its depth, at its `issuedAt`). An action the
 *   candidate no longer holds is dropped (NOT_GRANTED), one it now holds only with approval stays
 *   approval-required; the delegated grant's caveats as issued (the live policy's rules among
 *   them) add to the candidate's, so a rule the candidate removes still binds a delegated grant:
 *   the shadow never allows a delegated call that either policy's caveats stop.
 */
export function shadowGrantOf(
  grant: TaskGrant,
  live: Policy,
  candidate: Policy,
  catalog: Catalog,
): ShadowGrant {
  if (grant.parentId === null) {
    const requested = noneAsked(grant, live, catalog) ? undefined : held(grant);
    return composedUnder(candidate, catalog, grant, requested);
  }
  const root = composedUnder(candidate, catalog, grant, held(grant));
  if (root.kind !== "granted") return root;
  return narrowedTo(root.grant, grant, catalog);
}

/** Decides `call` under the shadow grant: the flip when its verdict differs from the live `from`, else undefined. */
export function shadowFlipOf(
  from: Decision,
  shadow: ShadowGrant,
  catalog: Catalog,
  call: ToolCall,
  ctx: DecideContext,
): ShadowFlip | undefined {
  if (shadow.kind === "refused")
    return from === "deny" ? undefined : { to: "deny", reasonCode: shadow.code };
  const assessed = assess(shadow.grant, catalog, call, ctx);
  const { verdict } = assessed;
  if (verdict.decision === from) return undefined;
  const rule = decidingRule(assessed, shadow.grant);
  return {
    to: verdict.decision,
    ...(verdict.reason === undefined ? {} : { reasonCode: verdict.reason.code }),
    ...(rule === undefined ? {} : { rule }),
  };
}

function held(grant: TaskGrant): string[] {
  return [...grant.allowed, ...grant.approvalRequired];
}

function requestOf(grant: TaskGrant, requested: readonly string[] | undefined): ComposeRequest {
  return {
    profile: grant.profile,
    subject: grant.subject,
    owner: grant.owner,
    purpose: grant.purpose,
    mode: grant.mode,
    ttlSeconds: grant.expiresAt - grant.issuedAt,
    ...(requested === undefined ? {} : { requestedActions: requested }),
  };
}

/** Whether the live policy, asked for nothing in particular, gives the grant's three lists. */
function noneAsked(grant: TaskGrant, live: Policy, catalog: Catalog): boolean {
  const again = compose(requestOf(grant, undefined), live, catalog, grant.issuedAt, grant.id);
  if (again.kind !== "granted") return false;
  const same = (a: readonly string[], b: readonly string[]) =>
    a.length === b.length && a.every((x, i) => x === b[i]);
  return (
    same(again.grant.allowed, grant.allowed) &&
    same(again.grant.approvalRequired, grant.approvalRequired) &&
    same(again.grant.denied, grant.denied)
  );
}

function composedUnder(
  candidate: Policy,
  catalog: Catalog,
  grant: TaskGrant,
  requested: readonly string[] | undefined,
): ShadowGrant {
  const composed: ComposeResult = compose(
    requestOf(grant, requested),
    candidate,
    catalog,
    grant.issuedAt,
    grant.id,
  );
  if (composed.kind === "denied")
    return { kind: "refused", code: composed.code, message: composed.message };
  if (composed.kind === "unknown_action")
    return {
      kind: "refused",
      code: "UNKNOWN_ACTION",
      message: `${composed.source} names "${composed.actionId}", which the catalog lacks`,
    };
  // Asked for nothing at all (a grant that held nothing): the candidate's grant holds nothing either.
  if (requested !== undefined && requested.length === 0)
    return {
      kind: "granted",
      grant: { ...composed.grant, allowed: [], approvalRequired: [], caveats: {} },
    };
  return { kind: "granted", grant: composed.grant };
}

function narrowedTo(root: TaskGrant, child: TaskGrant, catalog: Catalog): ShadowGrant {
  const rootAllowed = new Set(root.allowed);
  const rootHolds = new Set(held(root));
  const allowed = child.allowed.filter((a) => rootAllowed.has(a));
  const approvalRequired = [
    ...child.approvalRequired.filter((a) => rootHolds.has(a)),
    ...child.allowed.filter((a) => !rootAllowed.has(a) && rootHolds.has(a)),
  ];
  const kept = new Set([...allowed, ...approvalRequired]);
  const caveats = Object.fromEntries(Object.entries(child.caveats).filter(([a]) => kept.has(a)));
  // The candidate's root placed where the child's parent stands, so `delegate` checks its depth.
  const chain = child.chain.slice(0, -1);
  const parent: TaskGrant = {
    ...root,
    id: child.parentId ?? root.id,
    rootId: child.rootId,
    parentId: chain.length === 0 ? null : (chain[chain.length - 1] ?? null),
    chain,
    chainRuns: child.chainRuns?.slice(0, -1) ?? chain.map(() => ANY_RUN),
  };
  const runId = child.chainRuns?.[child.chainRuns.length - 1];
  const delegated = delegate(
    parent,
    {
      subject: child.subject,
      purpose: child.purpose,
      allowed,
      approvalRequired,
      caveats,
      mode: child.mode,
      ...(runId === undefined || runId === ANY_RUN ? {} : { runId }),
    },
    catalog,
    child.issuedAt,
    child.id,
  );
  if (delegated.kind === "refused")
    return { kind: "refused", code: delegated.code, message: delegated.message };
  return delegated;
}
