import type { Catalog } from "./catalog.js";
import type { ComposeRequest } from "./compose.js";
import type { DelegationSpec } from "./delegate.js";
import type { TaskGrant } from "./grant.js";
import type { ActionCaveats, Policy } from "./policy.js";
import type { SuiteDelegation, TestSuite } from "./policy-test-suite.js";
import { recompose, type OriginLink } from "./replay.js";

/** The grant a suite's cases run under, or why it cannot be had (a compose or delegation code). */
export type SuiteGrantResult =
  | { readonly kind: "granted"; readonly grant: TaskGrant }
  | { readonly kind: "refused"; readonly code: string; readonly message: string };

/**
 * Composes the suite's grant for one profile as IssueGrant would, then, when the suite delegates,
 * narrows it with the core's `delegate` as DelegateGrant would (tool names stand for their
 * actions; a caveat schema that does not compile is refused before anything is derived).
 */
export function suiteGrant(
  suite: TestSuite,
  profile: string,
  policy: Policy,
  catalog: Catalog,
): SuiteGrantResult {
  const root: OriginLink = {
    grantId: "grt_test",
    issuedAt: suite.now,
    origin: { kind: "composed", request: suiteRequest(suite, profile) },
  };
  const d = suite.grant.delegate;
  const spec = d === undefined ? undefined : suiteDelegationSpec(d, catalog);
  if (typeof spec === "string") return refusedWith("INVALID_REQUEST", spec);
  // Made as `charter replay` makes a recorded grant again: the same compose, then the same delegate.
  const made = recompose(
    spec === undefined
      ? [root]
      : [
          root,
          { grantId: "grt_test_child", issuedAt: suite.now, origin: { kind: "delegated", spec } },
        ],
    policy,
    catalog,
  );
  return made.ok ? { kind: "granted", grant: made.grant } : refusedWith(made.code, made.message);
}

/** What IssueGrant would be asked for the suite's grant under `profile` (defaults filled in). */
export function suiteRequest(suite: TestSuite, profile: string): ComposeRequest {
  const g = suite.grant;
  return {
    profile,
    subject: g.subject ?? "agent:test",
    owner: g.owner ?? "owner:test",
    purpose: g.purpose ?? "charter test",
    ...(g.actions === undefined ? {} : { requestedActions: g.actions }),
    ...(g.shadow === true ? { mode: "shadow" as const } : {}),
  };
}

function refusedWith(code: string, message: string): SuiteGrantResult {
  return { kind: "refused", code, message };
}

/** The action a suite names: an action id as it is, a tool name as its action. */
function actionOf(name: string, catalog: Catalog): string {
  if (catalog.actions.has(name)) return name;
  return catalog.tools.get(name)?.id ?? name;
}

/** The core's spec for a suite's delegation, or a message naming a caveat schema that does not compile. */
export function suiteDelegationSpec(d: SuiteDelegation, catalog: Catalog): DelegationSpec | string {
  const caveats: Record<string, Partial<ActionCaveats>> = {};
  for (const [name, c] of Object.entries(d.caveats ?? {})) {
    const constraints = c.constraints ?? [];
    for (const [i, schema] of constraints.entries()) {
      try {
        catalog.schemas.compile(schema);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        return `grant.delegate.caveats["${name}"].constraints[${i}] is not a usable JSON Schema: ${why}`;
      }
    }
    caveats[actionOf(name, catalog)] = {
      constraints: [...constraints],
      ...(c.binds === undefined ? {} : { binds: c.binds }),
    };
  }
  return {
    subject: d.subject,
    ...(d.purpose === undefined ? {} : { purpose: d.purpose }),
    allowed: d.allowed.map((a) => actionOf(a, catalog)),
    ...(d.approvalRequired === undefined
      ? {}
      : { approvalRequired: d.approvalRequired.map((a) => actionOf(a, catalog)) }),
    ...(d.ttlSeconds === undefined ? {} : { ttlSeconds: d.ttlSeconds }),
    ...(d.limits === undefined ? {} : { limits: d.limits }),
    caveats,
  };
}
