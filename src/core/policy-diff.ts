import type { Catalog } from "./catalog.js";
import { canonicalJson } from "./digest.js";
import { compose } from "./compose.js";
import { assess } from "./decide.js";
import { caveatsOf, type TaskGrant } from "./grant.js";
import { compareCodeUnits, sortedUnique, type JsonObject } from "./json.js";
import type { Policy } from "./policy.js";
import { projectCatalog, type ToolStatus } from "./project.js";
import { sampleCalls, type SampleCall } from "./sample-calls.js";
import type { Decision } from "./verdict.js";

// `charter diff OLD NEW` (docs/policy-analysis.md): per profile and action, whether the new
// policy (and catalog) is equal, more permissive, less permissive or changed, found by composing
// each profile's grant under both versions and deciding the same sample calls under both with
// the pure compose and assess the server uses; and the catalog a model would see per profile.

/** One version of the pair. */
export interface PolicyVersion {
  readonly policy: Policy;
  readonly catalog: Catalog;
}

export type Change = "equal" | "more permissive" | "less permissive" | "changed";

export interface VerdictSummary {
  readonly decision: Decision;
  readonly reason?: string;
  readonly requirement?: string;
}

export interface ActionDiff {
  readonly profile: string;
  readonly action: string;
  readonly change: Change;
  /** A call decided differently, with both verdicts; absent when equal. */
  readonly counterexample?: {
    readonly tool: string;
    readonly arguments: JsonObject;
    readonly old: VerdictSummary;
    readonly new: VerdictSummary;
  };
}

/** How the tools a profile's grant shows changed: gained, lost, and callable ↔ requires approval. */
export interface CatalogDiff {
  readonly profile: string;
  readonly gained: readonly string[];
  readonly lost: readonly string[];
  readonly changed: readonly { tool: string; from: ToolStatus; to: ToolStatus }[];
}

/** A profile whose grant's standing changed: present or not, composable or not, live or shadow. */
export interface ProfileDiff {
  readonly profile: string;
  readonly old: string;
  readonly new: string;
}

/**
 * A limit of a profile's grant that differs between the versions: a call budget, the delegation
 * depth, or the lifetime in seconds; `null` is no limit (more permissive than any number).
 */
export interface LimitDiff {
  readonly profile: string;
  readonly limit: "maxCalls" | "maxCallsPerAction" | "maxDelegationDepth" | "lifetimeSeconds";
  readonly old: number | null;
  readonly new: number | null;
  readonly change: "more permissive" | "less permissive";
}

export interface PolicyDiff {
  readonly equal: boolean;
  readonly profiles: readonly ProfileDiff[];
  readonly actions: readonly ActionDiff[];
  readonly catalogs: readonly CatalogDiff[];
  readonly limits: readonly LimitDiff[];
}

const RANK: Readonly<Record<Decision, number>> = {
  deny: 0,
  require_approval: 1,
  effect_suppressed: 1,
  allow: 2,
};

/** Compares two versions of the pair. Pure: the same versions give the same diff. */
export function diffPolicies(older: PolicyVersion, newer: PolicyVersion, now: number): PolicyDiff {
  const ids = [...new Set([...older.policy.profiles.keys(), ...newer.policy.profiles.keys()])];
  const profiles: ProfileDiff[] = [];
  const actions: ActionDiff[] = [];
  const catalogs: CatalogDiff[] = [];
  const limits: LimitDiff[] = [];
  for (const profile of ids) {
    const a = grantOf(older, profile, now);
    const b = grantOf(newer, profile, now);
    if (a.standing !== b.standing) profiles.push({ profile, old: a.standing, new: b.standing });
    const held = (g: TaskGrant | undefined) => (g ? [...g.allowed, ...g.approvalRequired] : []);
    for (const action of sortedUnique([...held(a.grant), ...held(b.grant)]))
      actions.push(diffAction(profile, action, older, a.grant, newer, b.grant, now));
    const tools = catalogDiff(profile, older, a.grant, newer, b.grant);
    if (tools.gained.length + tools.lost.length + tools.changed.length > 0) catalogs.push(tools);
    if (a.grant && b.grant) limits.push(...limitDiffs(profile, a.grant, b.grant));
  }
  return {
    equal:
      profiles.length === 0 &&
      catalogs.length === 0 &&
      limits.length === 0 &&
      actions.every((d) => d.change === "equal"),
    profiles,
    actions,
    catalogs,
    limits,
  };
}

/** The limits of the two grants of one profile that differ (composed at the same instant). */
function limitDiffs(profile: string, a: TaskGrant, b: TaskGrant): LimitDiff[] {
  const of = (g: TaskGrant) => ({
    maxCalls: g.limits.maxCalls ?? null,
    maxCallsPerAction: g.limits.maxCallsPerAction ?? null,
    maxDelegationDepth: g.limits.maxDelegationDepth,
    lifetimeSeconds: g.expiresAt - g.issuedAt,
  });
  const was = of(a);
  const is = of(b);
  const out: LimitDiff[] = [];
  for (const limit of Object.keys(was) as LimitDiff["limit"][]) {
    const [o, n] = [was[limit], is[limit]];
    if (o === n) continue;
    const wider = n === null || (o !== null && n > o);
    out.push({
      profile,
      limit,
      old: o,
      new: n,
      change: wider ? "more permissive" : "less permissive",
    });
  }
  return out;
}

function grantOf(
  version: PolicyVersion,
  profile: string,
  now: number,
): { grant?: TaskGrant; standing: string } {
  const found = version.policy.profiles.get(profile);
  if (found === undefined) return { standing: "absent" };
  const c = compose(
    { profile, subject: "agent:diff", owner: "owner:diff", purpose: "charter diff" },
    version.policy,
    version.catalog,
    now,
    "grt_diff",
  );
  if (c.kind !== "granted")
    return { standing: `not composable (${c.kind === "denied" ? c.code : "UNKNOWN_ACTION"})` };
  // Compared as live: a shadow profile's verdicts are the live ones, suppressed.
  return { grant: { ...c.grant, mode: "live" }, standing: found.mode };
}

function diffAction(
  profile: string,
  action: string,
  older: PolicyVersion,
  a: TaskGrant | undefined,
  newer: PolicyVersion,
  b: TaskGrant | undefined,
  now: number,
): ActionDiff {
  const caveats = [a, b].flatMap((g) => (g ? [caveatsOf(g, action)] : []));
  const samples: SampleCall[] = [];
  const seen = new Set<string>();
  for (const catalog of new Set([newer.catalog, older.catalog]))
    for (const s of sampleCalls(catalog, action, caveats)) {
      const key = canonicalJson(s.arguments);
      if (!seen.has(key)) {
        seen.add(key);
        samples.push(s);
      }
    }
  let more: ActionDiff["counterexample"];
  let less: ActionDiff["counterexample"];
  let other: ActionDiff["counterexample"];
  for (const s of samples) {
    const was = verdictOf(older, a, s, now);
    const is = verdictOf(newer, b, s, now);
    const ex = { tool: s.toolName, arguments: s.arguments, old: was, new: is };
    const up = RANK[is.decision] - RANK[was.decision];
    if (up > 0) more ??= ex;
    else if (up < 0) less ??= ex;
    else if (was.decision !== "deny" && was.requirement !== is.requirement) other ??= ex;
  }
  const change: Change =
    more && less
      ? "changed"
      : more
        ? "more permissive"
        : less
          ? "less permissive"
          : other
            ? "changed"
            : "equal";
  const counterexample = more ?? less ?? other;
  return { profile, action, change, ...(counterexample ? { counterexample } : {}) };
}

function verdictOf(
  version: PolicyVersion,
  grant: TaskGrant | undefined,
  sample: SampleCall,
  now: number,
): VerdictSummary {
  if (grant === undefined) return { decision: "deny", reason: "NOT_GRANTED" };
  const v = assess(
    grant,
    version.catalog,
    { callId: "call_diff", actionId: sample.actionId, arguments: sample.arguments },
    { now },
  ).verdict;
  return {
    decision: v.decision,
    ...(v.reason === undefined ? {} : { reason: v.reason.code }),
    ...(v.requirement === undefined ? {} : { requirement: v.requirement }),
  };
}

function catalogDiff(
  profile: string,
  older: PolicyVersion,
  a: TaskGrant | undefined,
  newer: PolicyVersion,
  b: TaskGrant | undefined,
): CatalogDiff {
  const view = (v: PolicyVersion, g: TaskGrant | undefined) =>
    new Map(g ? projectCatalog(g, v.catalog).tools.map((e) => [e.name, e.status] as const) : []);
  const was = view(older, a);
  const is = view(newer, b);
  return {
    profile,
    gained: sortedUnique([...is.keys()].filter((t) => !was.has(t))),
    lost: sortedUnique([...was.keys()].filter((t) => !is.has(t))),
    changed: [...is]
      .filter(([t, s]) => was.has(t) && was.get(t) !== s)
      .map(([tool, to]) => ({ tool, from: was.get(tool) as ToolStatus, to }))
      .sort((x, y) => compareCodeUnits(x.tool, y.tool)),
  };
}
