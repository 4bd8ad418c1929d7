import type { Catalog } from "./catalog.js";
import { compose } from "./compose.js";
import { delegate, type DelegationSpec } from "./delegate.js";
import type { TaskGrant } from "./grant.js";
import type { ActionCaveats, Policy } from "./policy.js";
import type { SuiteDelegation, TestSuite } from "./policy-test-suite.js";

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
  const g = suite.grant;
  const composed = compose(
    {
      profile,
      subject: g.subject ?? "agent:test",
      owner: g.owner ?? "owner:test",
      purpose: g.purpose ?? "charter test",
      ...(g.actions === undefined ? {} : { requestedActions: g.actions }),
      ...(g.shadow === true ? { mode: "shadow" as const } : {}),
    },
    policy,
    catalog,
    suite.now,
    "grt_test",
  );
  if (composed.kind === "unknown_action")
    return refusedWith(
      "UNKNOWN_ACTION",
      `${composed.source} names "${composed.actionId}", which the catalog lacks`,
    );
  if (composed.kind === "denied") return refusedWith(composed.code, composed.message);
  if (g.delegate === undefined) return composed;
  const spec = suiteDelegationSpec(g.delegate, catalog);
  if (typeof spec === "string") return refusedWith("INVALID_REQUEST", spec);
  const child = delegate(composed.grant, spec, catalog, suite.now, "grt_test_child");
  return child.kind === "granted" ? child : refusedWith(child.code, child.message);
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
