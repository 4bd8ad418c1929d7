import {
  recompose,
  replayDecision,
  replayTally,
  type Recomposed,
  type ReplayReport,
} from "../core/replay.js";
import type { ReplayRow } from "../store/port.js";
import type { AuthorityContext, PolicySet } from "./context.js";
import { openedInputs } from "./decision-inputs.js";
import { originLinks } from "./grant-origins.js";
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

/**
 * `charter replay`: every decision of the audit log in [from, to], decided again under the
 * candidate — its grant made again from its recorded origin (`recompose`), its call from its
 * retained inputs — and folded into a report (the transition matrix and the flips, the newly
 * allowing ones first). Offline and read-only: nothing is written, nothing is signed. The
 * decisions are read in audit order with their inputs (`readReplayPage`); a row this version
 * cannot read is CORRUPT, never skipped.
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
  const withHash = { ...candidate, hash: nativeSha256Hex };
  let after = Math.max(0, (options.from ?? 1) - 1);
  let seen = 0;
  for (;;) {
    const page = await ctx.store.readReplayPage(after, last, PAGE);
    if (page.length === 0) break;
    for (const { grantId } of page)
      if (!grants.has(grantId)) grants.set(grantId, await recomposed(ctx, grantId, candidate));
    for (const recorded of page) {
      const retained =
        recorded.inputs === undefined
          ? undefined
          : openedInputs(ctx, recorded.decisionId, recorded.inputs);
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
    if (page.length < PAGE) break;
    after = (page.at(-1) as ReplayRow).seq;
  }
  return tally.report();
}

/** A grant made again under the candidate from its chain's recorded origins; undefined without them. */
async function recomposed(
  ctx: AuthorityContext,
  grantId: string,
  candidate: PolicySet,
): Promise<Recomposed | undefined> {
  if (grantId === "") return undefined;
  const stored = await ctx.store.getGrant(grantId);
  const links = stored && (await originLinks(ctx, stored.grant));
  return links && recompose(links, candidate.policy, candidate.catalog);
}
