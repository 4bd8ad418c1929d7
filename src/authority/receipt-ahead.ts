import type { Verdict } from "../core/verdict.js";
import { traced } from "../telemetry/tracing.js";
import type { AuthorityContext } from "./context.js";
import { signStep, type Loaded } from "./pipeline-steps.js";

/** Asked between steps: throws once the caller has gone. */
export type CallerSignal = Pick<AbortSignal, "throwIfAborted">;

/** A receipt signed ahead of its commit, handed out only for the very verdict it was signed for. */
export interface ReceiptAhead {
  /** The receipt when `committed` is the allow it was signed for (the commit refused nothing); otherwise undefined. */
  for(committed: Verdict): Promise<string | undefined>;
}

export const NOTHING_AHEAD: ReceiptAhead = { for: async () => undefined };

/**
 * The receipt of a pending allow, signed now, while its commit is made durable: the signature and
 * the flush wait on the thread pool side by side instead of one after the other (at one call in
 * flight, Authorize's p50 about 13 % lower; docs/architecture.md, "Receipts"). It leaves
 * only through `for` — when the commit answered this very allow, not a refusal — and then only if
 * the caller has not gone (`signed` asks again); otherwise it is dropped unseen. Nothing is signed
 * ahead for a caller that has gone already, nor for a grant a commit has refused before
 * (`ctx.caches.refusedGrants`: a budget only fills, so such a grant's allows go on being refused,
 * and each would cost a signature thrown away); a refusal met here puts the grant there.
 */
export function receiptAhead(
  ctx: AuthorityContext,
  loaded: Loaded,
  pending: Verdict,
  decisionId: string,
  argumentsDigest: string,
  signal: CallerSignal | undefined,
): ReceiptAhead {
  const grant = loaded.check.ok ? loaded.check.grant : undefined;
  if (pending.decision !== "allow" || grant === undefined) return NOTHING_AHEAD;
  const refusedGrants = ctx.caches.refusedGrants;
  const refused = (committed: Verdict) => {
    if (committed.decision === "allow") return false;
    refusedGrants.add(grant);
    return true;
  };
  if (refusedGrants.has(grant) || isGone(signal))
    return { for: async (committed) => void refused(committed) };
  const receipt = traced("charter.sign", () =>
    signStep(ctx, loaded, grant, pending, decisionId, argumentsDigest),
  );
  // A commit that fails first leaves the receipt unasked: its failure, if any, is not left unhandled.
  receipt.catch(() => undefined);
  return {
    for: async (committed) => (refused(committed) || committed !== pending ? undefined : receipt),
  };
}

function isGone(signal: CallerSignal | undefined): boolean {
  try {
    signal?.throwIfAborted();
    return false;
  } catch {
    return true;
  }
}
