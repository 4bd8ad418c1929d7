import {
  recompose,
  replayDecision,
  replayTally,
  type DecisionInputs,
  type OriginLink,
  type Recomposed,
  type RecordedDecision,
  type ReplayReport,
} from "../core/replay.js";
import type { Decision } from "../core/verdict.js";
import { StoreError } from "../store/port.js";
import type { AuthorityContext, PolicySet } from "./context.js";
import { nativeSha256Hex } from "./sha256.js";

/** How many audit records are read per page. */
const PAGE = 2000;

export interface ReplayOptions {
  /** The candidate pair every recorded decision is decided again under. */
  readonly candidate: PolicySet;
  /** The first and last audit seq to replay (inclusive); the whole log without them. */
  readonly from?: number;
  readonly to?: number;
  /** Called after each page with how many decisions were looked at so far. */
  readonly progress?: (decisions: number) => void;
}

const DECISIONS: ReadonlySet<string> = new Set<Decision>([
  "allow",
  "deny",
  "require_approval",
  "effect_suppressed",
]);

/**
 * `charter replay`: every decision of the audit log in [from, to], decided again under the
 * candidate — its grant made again from its recorded origin (`recompose`), its call from its
 * retained inputs — and folded into a report (the transition matrix and the flips, the newly
 * allowing ones first). Offline and read-only: nothing is written, nothing is signed. A record
 * the log holds that does not read as a decision is CORRUPT, never skipped.
 */
export async function replayDecisions(
  ctx: AuthorityContext,
  options: ReplayOptions,
): Promise<ReplayReport> {
  const { candidate } = options;
  const tally = replayTally();
  // Each grant is made again once per replay; most calls of a log share their grant with many.
  const grants = new Map<string, Recomposed | undefined>();
  const last = options.to ?? Number.MAX_SAFE_INTEGER;
  let after = Math.max(0, (options.from ?? 1) - 1);
  let seen = 0;
  for (;;) {
    const rows = await ctx.store.readAudit(after, PAGE);
    if (rows.length === 0) break;
    const page: RecordedDecision[] = [];
    for (const row of rows) {
      if (row.seq > last) break;
      const recorded = recordedDecision(row.seq, row.entry);
      if (recorded !== undefined) page.push(recorded);
    }
    const inputs = await ctx.store.getDecisionInputs(page.map((d) => d.decisionId));
    for (const recorded of page)
      if (!grants.has(recorded.grantId))
        grants.set(recorded.grantId, await recomposed(ctx, recorded.grantId, candidate));
    const withHash = { ...candidate, hash: nativeSha256Hex };
    for (const recorded of page) {
      const stored = inputs.get(recorded.decisionId);
      const retained =
        stored === undefined ? undefined : inputsOf(ctx, recorded.decisionId, stored);
      const approval =
        recorded.approvalId !== undefined && recorded.decision === "allow"
          ? (await ctx.store.getApproval(recorded.approvalId))?.approval
          : undefined;
      const outcome = replayDecision(
        recorded,
        retained,
        grants.get(recorded.grantId),
        withHash,
        approval,
      );
      tally.add(recorded.decisionId, outcome);
    }
    seen += page.length;
    options.progress?.(seen);
    const end = rows.at(-1)?.seq ?? after;
    if (end >= last || rows.length < PAGE) break;
    after = end;
  }
  return tally.report();
}

/** The decision an audit record holds, or undefined for a record of another kind. */
function recordedDecision(seq: number, entry: string): RecordedDecision | undefined {
  // Cheap test first: most logs are mostly decisions, and the rest need no parse.
  if (!entry.includes('"kind":"decision"')) return undefined;
  let r: Record<string, unknown>;
  try {
    r = JSON.parse(entry) as Record<string, unknown>;
  } catch (cause) {
    throw new StoreError("CORRUPT", `audit record ${seq} does not parse`, { cause });
  }
  if (r.kind !== "decision") return undefined;
  const text = (k: string) => {
    const v = r[k];
    return typeof v === "string" ? v : undefined;
  };
  const decisionId = text("decisionId");
  const grantId = text("grantId");
  const decision = text("decision");
  if (
    decisionId === undefined ||
    grantId === undefined ||
    decision === undefined ||
    !DECISIONS.has(decision) ||
    typeof r.at !== "number"
  )
    throw new StoreError("CORRUPT", `audit record ${seq} is not a decision this version reads`);
  const reasonCode = text("reasonCode");
  const approvalId = text("approvalId");
  return {
    seq,
    decisionId,
    at: r.at,
    grantId,
    actionId: text("actionId") ?? "",
    toolName: text("toolName") ?? "",
    callId: text("callId") ?? "",
    decision: decision as Decision,
    ...(reasonCode === undefined ? {} : { reasonCode }),
    ...(approvalId === undefined ? {} : { approvalId }),
  };
}

function inputsOf(ctx: AuthorityContext, decisionId: string, stored: string): DecisionInputs {
  const text = ctx.decisionInputs.sealer.open(decisionId, stored);
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === "object" && value !== null && "arguments" in value)
      return value as DecisionInputs;
  } catch {
    // reported below
  }
  throw new StoreError("CORRUPT", `decision ${decisionId}: its retained inputs are malformed`);
}

/**
 * A grant made again under the candidate from the recorded origins of its chain, root first;
 * undefined when the grant or any grant of its chain has no recorded origin (issued before
 * origins were recorded, or pruned).
 */
async function recomposed(
  ctx: AuthorityContext,
  grantId: string,
  candidate: PolicySet,
): Promise<Recomposed | undefined> {
  if (grantId === "") return undefined;
  const stored = await ctx.store.getGrant(grantId);
  if (stored === undefined) return undefined;
  const links: OriginLink[] = [];
  for (const id of [...stored.grant.chain, grantId]) {
    const grant = id === grantId ? stored.grant : (await ctx.store.getGrant(id))?.grant;
    const origin = await ctx.store.getGrantOrigin(id);
    if (grant === undefined || origin === undefined) return undefined;
    links.push({ grantId: id, issuedAt: grant.issuedAt, origin });
  }
  return recompose(links, candidate.policy, candidate.catalog);
}
