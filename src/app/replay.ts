import { replayDecisions, type ReplayOptions } from "../authority/index.js";
import type { ReplayReport } from "../authority/index.js";
import type { CharterConfig } from "../config/config.js";
import { createAppContext } from "./context.js";
import { loadPolicySet } from "./policy-set.js";

/**
 * `charter replay`, offline on the configured store: the candidate pair loads first (a candidate
 * that does not load opens nothing), then the store, read only as far as replay goes.
 */
export async function replayStore(
  config: CharterConfig,
  candidate: { readonly policy: string; readonly catalog?: string },
  options: Omit<ReplayOptions, "candidate">,
): Promise<ReplayReport> {
  const set = await loadPolicySet({
    ...config,
    policy: candidate.policy,
    catalog: candidate.catalog ?? config.catalog,
  });
  const ctx = await createAppContext(config, { tokenCacheSize: 1 });
  try {
    return await replayDecisions(ctx, { ...options, candidate: set });
  } finally {
    await ctx.close();
  }
}
