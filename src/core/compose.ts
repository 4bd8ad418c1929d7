import type { Catalog } from "./catalog.js";
import type { GrantLimits, TaskGrant } from "./grant.js";
import { mergeBinds } from "./binds.js";
import { compareCodeUnits, sortedUnique, type JsonObject, type JsonSchema } from "./json.js";
import type { ActionCaveats, AuthoritySource, GrantMode, Policy, Rule } from "./policy.js";

/** What an orchestrator asks for. */
export interface ComposeRequest {
  readonly profile: string;
  readonly subject: string;
  readonly owner: string;
  readonly purpose: string;
  /** When non-empty, the grant holds no action outside this list (least privilege). */
  readonly requestedActions?: readonly string[];
  /** Asked lifetime; the grant lives min(this, the sources' runtime). */
  readonly ttlSeconds?: number;
  /** `shadow` may be asked of a live profile; a shadow profile stays shadow. */
  readonly mode?: GrantMode;
}

/** Why a grant could not be composed. */
export const COMPOSE_DENIAL_CODES = [
  "UNKNOWN_PROFILE",
  "SOURCE_MISSING",
  "SOURCE_SUSPENDED",
  "BIND_CONFLICT",
  "INVALID_REQUEST",
] as const;

export type ComposeDenialCode = (typeof COMPOSE_DENIAL_CODES)[number];

export type ComposeResult =
  | { readonly kind: "granted"; readonly grant: TaskGrant }
  | { readonly kind: "denied"; readonly code: ComposeDenialCode; readonly message: string }
  /** The policy (or the request) names an action the catalog lacks; `source` is the source id or "request". */
  | { readonly kind: "unknown_action"; readonly actionId: string; readonly source: string };

/**
 * Composes a task grant from the policy (DESIGN §2). Pure: the same inputs give the same grant,
 * byte for byte. `now` is Unix seconds, `id` the new grant's id.
 */
export function compose(
  request: ComposeRequest,
  policy: Policy,
  catalog: Catalog,
  now: number,
  id: string,
): ComposeResult {
  const profile = policy.profiles.get(request.profile);
  if (!profile) return denied("UNKNOWN_PROFILE", `no profile named "${request.profile}"`);
  if (
    request.ttlSeconds !== undefined &&
    !(Number.isSafeInteger(request.ttlSeconds) && request.ttlSeconds > 0)
  ) {
    return denied("INVALID_REQUEST", "ttlSeconds must be a positive integer");
  }

  // 1. Every source the profile names exists and is active; active global sources always apply.
  const applied: AuthoritySource[] = [];
  for (const sourceId of profile.sources) {
    const source = policy.sources.get(sourceId);
    if (!source)
      return denied(
        "SOURCE_MISSING",
        `profile "${profile.id}" names source "${sourceId}", which the policy lacks`,
      );
    if (source.status !== "active")
      return denied(
        "SOURCE_SUSPENDED",
        `source "${sourceId}" of profile "${profile.id}" is suspended`,
      );
    applied.push(source);
  }
  for (const source of policy.sources.values()) {
    if (source.global && source.status === "active" && !applied.includes(source))
      applied.push(source);
  }

  // 2. Every action id any applied source (or the request) names is in the catalog.
  for (const source of applied) {
    for (const actionId of [
      ...source.allow,
      ...source.approval,
      ...source.deny,
      ...source.caveats.keys(),
    ]) {
      if (!catalog.actions.has(actionId))
        return { kind: "unknown_action", actionId, source: source.id };
    }
  }
  const requested = request.requestedActions ?? [];
  for (const actionId of requested) {
    if (!catalog.actions.has(actionId))
      return { kind: "unknown_action", actionId, source: "request" };
  }

  // 3–5. allow = ∪ grant allows ∩ each non-empty narrow allow ∩ requested; deny > approval > allow.
  const bounds = applied
    .filter((s) => s.kind === "narrow" && s.allow.length > 0)
    .map((s) => new Set(s.allow));
  if (requested.length > 0) bounds.push(new Set(requested));
  const withinBounds = (actionId: string) => bounds.every((b) => b.has(actionId));
  const deny = new Set(applied.flatMap((s) => s.deny));
  const approval = new Set(
    applied.flatMap((s) => s.approval).filter((a) => withinBounds(a) && !deny.has(a)),
  );
  const allow = applied
    .filter((s) => s.kind === "grant")
    .flatMap((s) => s.allow)
    .filter((a) => withinBounds(a) && !deny.has(a) && !approval.has(a));

  const allowed = sortedUnique(allow);
  const approvalRequired = sortedUnique(approval);

  // 7. Caveats of granted actions travel with the grant.
  const caveats = collectCaveats([...allowed, ...approvalRequired], applied);
  if (typeof caveats === "string") return denied("BIND_CONFLICT", caveats);

  // 6. Limits are minima; expiry = now + min(runtime, requested ttl).
  const runtime =
    minOf(applied.map((s) => s.limits.maxRuntimeSeconds)) ?? policy.defaultRuntimeSeconds;
  const lifetime =
    request.ttlSeconds === undefined ? runtime : Math.min(runtime, request.ttlSeconds);
  const maxCalls = minOf(applied.map((s) => s.limits.maxCalls));
  const maxCallsPerAction = minOf(applied.map((s) => s.limits.maxCallsPerAction));
  const limits: GrantLimits = {
    ...(maxCalls === undefined ? {} : { maxCalls }),
    ...(maxCallsPerAction === undefined ? {} : { maxCallsPerAction }),
    maxDelegationDepth: minOf(applied.map((s) => s.limits.maxDelegationDepth)) ?? 0,
  };

  const grant: TaskGrant = {
    id,
    rootId: id,
    parentId: null,
    chain: [],
    subject: request.subject,
    owner: request.owner,
    purpose: request.purpose,
    profile: profile.id,
    issuedAt: now,
    expiresAt: now + lifetime,
    catalogVersion: catalog.version,
    allowed,
    approvalRequired,
    denied: sortedUnique(deny),
    caveats,
    limits,
    mode: profile.mode === "shadow" || request.mode === "shadow" ? "shadow" : "live",
    sources: applied.map((s) => s.id),
  };
  return { kind: "granted", grant };
}

function denied(code: ComposeDenialCode, message: string): ComposeResult {
  return { kind: "denied", code, message };
}

function minOf(values: readonly (number | undefined)[]): number | undefined {
  const set = values.filter((v): v is number => v !== undefined);
  return set.length === 0 ? undefined : Math.min(...set);
}

/** Merges the caveats every applied source sets for the granted actions; answers a message on a bind conflict. */
function collectCaveats(
  granted: readonly string[],
  applied: readonly AuthoritySource[],
): Record<string, ActionCaveats> | string {
  const out: Record<string, ActionCaveats> = {};
  for (const actionId of [...granted].sort(compareCodeUnits)) {
    const constraints: JsonSchema[] = [];
    let binds: JsonObject = {};
    const rules: Rule[] = [];
    for (const source of applied) {
      const c = source.caveats.get(actionId);
      if (!c) continue;
      constraints.push(...c.constraints);
      rules.push(...c.rules);
      const merged = mergeBinds(binds, c.binds);
      if (!merged.ok)
        return `sources bind argument "${merged.conflict}" of ${actionId} to different values`;
      binds = merged.binds;
    }
    if (constraints.length > 0 || rules.length > 0 || Object.keys(binds).length > 0) {
      out[actionId] = { constraints, binds, rules };
    }
  }
  return out;
}
