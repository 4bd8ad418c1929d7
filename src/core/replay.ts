import type { Catalog } from "./catalog.js";
import { compose, type ComposeDenialCode, type ComposeRequest } from "./compose.js";
import type { Hash } from "./digest.js";
import { delegate, type DelegationSpec, type RefusalCode } from "./delegate.js";
import type { TaskGrant } from "./grant.js";
import type { JsonValue } from "./json.js";
import type { Policy } from "./policy.js";
import { decidingRule } from "./policy-test-case.js";
import type { RunView } from "./run.js";
import type { Decision, ReasonCode } from "./verdict.js";
import { assessInForce } from "./withdraw.js";

/**
 * What a grant was made from, as IssueGrant or DelegateGrant was asked for it: the compose
 * request, or the delegation spec (tool names resolved to action ids) with the parent it narrowed.
 * With the grant's id and issue time it is enough to make the grant again under another policy.
 */
export type GrantOrigin =
  | { readonly kind: "composed"; readonly request: ComposeRequest }
  | { readonly kind: "delegated"; readonly spec: DelegationSpec };

/** One grant of a chain to make again: its id, when it was issued and what from. */
export interface OriginLink {
  readonly grantId: string;
  readonly issuedAt: number;
  readonly origin: GrantOrigin;
}

/** Why a grant could not be made again: the candidate refuses it, or an origin is missing. */
export type RecomposeRefusal = ComposeDenialCode | RefusalCode | "UNKNOWN_ACTION" | "NO_ORIGIN";

/** A grant made again under a candidate, or why the candidate would not have issued it. */
export type Recomposed =
  | { readonly ok: true; readonly grant: TaskGrant }
  | { readonly ok: false; readonly code: RecomposeRefusal; readonly message: string };

/**
 * Makes a grant again under `policy` and `catalog`: the chain's root composed from its recorded
 * request, each delegated grant below narrowed again by its recorded spec — with the ids and
 * times the grants had, so the call digests and chains are the same. A link the candidate
 * refuses (a profile gone, a source suspended, a delegation that would now widen) refuses the
 * grant and every grant below it.
 */
export function recompose(
  chain: readonly OriginLink[],
  policy: Policy,
  catalog: Catalog,
): Recomposed {
  let grant: TaskGrant | undefined;
  for (const link of chain) {
    const { origin } = link;
    if (origin.kind === "composed") {
      const r = compose(origin.request, policy, catalog, link.issuedAt, link.grantId);
      if (r.kind === "granted") grant = r.grant;
      else
        return {
          ok: false,
          code: r.kind === "denied" ? r.code : "UNKNOWN_ACTION",
          message: r.kind === "denied" ? r.message : `the catalog lacks action "${r.actionId}"`,
        };
    } else {
      if (grant === undefined)
        return { ok: false, code: "NO_ORIGIN", message: "a delegated grant without its root" };
      const r = delegate(grant, origin.spec, catalog, link.issuedAt, link.grantId);
      if (r.kind === "refused") return { ok: false, code: r.code, message: r.message };
      grant = r.grant;
    }
  }
  if (grant === undefined) return { ok: false, code: "NO_ORIGIN", message: "no origin recorded" };
  return { ok: true, grant };
}

/** A decision as the audit log recorded it: what replay compares against. */
export interface RecordedDecision {
  readonly seq: number;
  readonly decisionId: string;
  readonly decidedAt: number;
  readonly grantId: string;
  readonly actionId: string;
  readonly toolName: string;
  readonly callId: string;
  readonly decision: Decision;
  readonly reasonCode?: string;
  readonly approvalId?: string;
}

/** What was retained of a decision's call (`retainDecisionInputs`): its arguments and the run it was decided on. */
export interface DecisionInputs {
  readonly arguments: JsonValue;
  readonly run?: RunView;
}

/** Why a recorded decision cannot be decided again without guessing. */
export const NOT_REPLAYABLE = {
  "no-grant": "the call presented no grant that checked out: no policy decided it",
  "no-origin": "its grant was issued before origins were recorded, or was pruned",
  state: "decided by state outside the policy (a spent budget, a used or expired approval, a step)",
  "no-inputs": "its arguments were not retained and the candidate's outcome depends on them",
} as const;

export type NotReplayableReason = keyof typeof NOT_REPLAYABLE;

/** Outcomes that came from the store's state at commit time, not from the policy. */
const STATEFUL: ReadonlySet<string> = new Set<ReasonCode>([
  "LIMIT_EXCEEDED",
  "APPROVAL_CONSUMED",
  "APPROVAL_EXPIRED",
  "STEP_CONFLICT",
]);

/** Candidate outcomes decided before the arguments are read (decide's steps 1–3, and withdrawal). */
const BEFORE_ARGUMENTS: ReadonlySet<string> = new Set<ReasonCode>([
  "GRANT_EXPIRED",
  "UNKNOWN_ACTION",
  "EXPLICIT_DENY",
  "NOT_GRANTED",
  "POLICY_WITHDRAWN",
]);

/** One recorded decision decided again: the recorded and the candidate's decision, and what made the candidate's. */
export type ReplayOutcome =
  | {
      readonly kind: "replayed";
      readonly from: Decision;
      readonly to: Decision;
      /** The candidate's reason code, or the compose/delegate refusal's code. */
      readonly reasonCode?: string;
      /** The candidate's rule that decided (`ruleRef`), when a rule did. */
      readonly rule?: string;
    }
  | { readonly kind: "not_replayable"; readonly why: NotReplayableReason };

/**
 * Decides one recorded decision again under the candidate (pure): `grant` is its grant made
 * again under the candidate (`recompose`), undefined when no origin was recorded. Without
 * inputs the decision is replayed only where the candidate decides before reading arguments
 * (the action not granted, denied, unknown; the grant expired or withdrawn); otherwise it is not
 * replayable, never guessed. An allow that used an approval is decided with that approval as it
 * stood (approved); the target check is not repeated (targets are not retained).
 */
export function replayDecision(
  recorded: RecordedDecision,
  inputs: DecisionInputs | undefined,
  grant: Recomposed | undefined,
  candidate: { readonly policy: Policy; readonly catalog: Catalog; readonly hash?: Hash },
  approval?: { readonly callDigest: string; readonly expiresAt: number },
): ReplayOutcome {
  const from = recorded.decision;
  if (recorded.grantId === "") return { kind: "not_replayable", why: "no-grant" };
  if (recorded.reasonCode !== undefined && STATEFUL.has(recorded.reasonCode))
    return { kind: "not_replayable", why: "state" };
  if (grant === undefined) return { kind: "not_replayable", why: "no-origin" };
  if (!grant.ok) return { kind: "replayed", from, to: "deny", reasonCode: grant.code };
  const call = {
    callId: recorded.callId,
    ...(recorded.toolName === ""
      ? { actionId: recorded.actionId }
      : { toolName: recorded.toolName }),
    arguments: inputs?.arguments ?? {},
  };
  const used =
    approval !== undefined && recorded.approvalId !== undefined && from === "allow"
      ? {
          id: recorded.approvalId,
          callDigest: approval.callDigest,
          status: "approved" as const,
          expiresAt: approval.expiresAt,
        }
      : undefined;
  const assessment = assessInForce(grant.grant, candidate.catalog, candidate.policy, call, {
    now: recorded.decidedAt,
    recheck: true,
    ...(candidate.hash === undefined ? {} : { hash: candidate.hash }),
    ...(used === undefined ? {} : { approval: used }),
    ...(inputs?.run === undefined ? {} : { run: inputs.run }),
  });
  const { verdict } = assessment;
  const code = verdict.reason?.code;
  if (inputs === undefined && !(code !== undefined && BEFORE_ARGUMENTS.has(code)))
    return { kind: "not_replayable", why: "no-inputs" };
  const rule = decidingRule(assessment, grant.grant);
  return {
    kind: "replayed",
    from,
    to: verdict.decision,
    ...(code === undefined ? {} : { reasonCode: code }),
    ...(rule === undefined ? {} : { rule }),
  };
}

/** One cell of the transition matrix, with the decisions that made it (flips only). */
export interface ReplayFlip {
  readonly from: Decision;
  readonly to: Decision;
  readonly count: number;
  readonly decisionIds: readonly string[];
  /** What made the candidate's decisions of this cell: rule refs or reason codes, each once. */
  readonly because: readonly string[];
}

export interface ReplayReport {
  readonly replayed: number;
  readonly unchanged: number;
  readonly notReplayable: { readonly count: number; readonly why: Record<string, number> };
  /** Counts per `from → to`, unchanged cells included. */
  readonly matrix: Record<string, number>;
  /** The changed cells; the ones that newly allow (deny or require_approval → allow) first. */
  readonly flips: readonly ReplayFlip[];
}

/** Folds outcomes into a report as they come (one pass over a long log, nothing held but the flips). */
export function replayTally() {
  let replayed = 0;
  let unchanged = 0;
  let notCount = 0;
  const why: Record<string, number> = {};
  const matrix = new Map<string, number>();
  const flips = new Map<
    string,
    { from: Decision; to: Decision; ids: string[]; because: Set<string> }
  >();
  return {
    add(decisionId: string, outcome: ReplayOutcome): void {
      if (outcome.kind === "not_replayable") {
        notCount += 1;
        why[outcome.why] = (why[outcome.why] ?? 0) + 1;
        return;
      }
      replayed += 1;
      const key = `${outcome.from} -> ${outcome.to}`;
      matrix.set(key, (matrix.get(key) ?? 0) + 1);
      if (outcome.from === outcome.to) {
        unchanged += 1;
        return;
      }
      let flip = flips.get(key);
      if (flip === undefined) {
        flip = { from: outcome.from, to: outcome.to, ids: [], because: new Set() };
        flips.set(key, flip);
      }
      flip.ids.push(decisionId);
      const because = outcome.rule ?? outcome.reasonCode;
      if (because !== undefined) flip.because.add(because);
    },
    report(): ReplayReport {
      const list = [...flips.values()].map((f) => ({
        from: f.from,
        to: f.to,
        count: f.ids.length,
        decisionIds: f.ids,
        because: [...f.because],
      }));
      const newlyAllows = (f: ReplayFlip) => (f.to === "allow" ? 0 : 1);
      list.sort(
        (a, b) =>
          newlyAllows(a) - newlyAllows(b) ||
          b.count - a.count ||
          `${a.from}${a.to}`.localeCompare(`${b.from}${b.to}`),
      );
      return {
        replayed,
        unchanged,
        notReplayable: { count: notCount, why: { ...why } },
        matrix: Object.fromEntries([...matrix].sort(([a], [b]) => a.localeCompare(b))),
        flips: list,
      };
    },
  };
}
