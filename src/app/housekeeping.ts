import type { Logger } from "pino";
import type { CharterConfig } from "../config/config.js";
import type { AppContext } from "./context.js";

/** How often pending approvals past their time are recorded expired (so watchers see it). */
export const EXPIRY_SWEEP_MS = 1000;

/**
 * The server's timers: approvals whose time ran out are recorded `expired` every second (and
 * watchers woken), and the audit chain head is checkpointed every `auditCheckpointSeconds` when
 * records were added. `stop` ends both and signs a last checkpoint.
 */
export function startHousekeeping(
  ctx: AppContext,
  config: CharterConfig,
  log: Logger,
): { stop(): Promise<void> } {
  const failed = (what: string) => (err: unknown) =>
    log.warn({ err: { message: (err as Error).message } }, `${what} failed; retrying later`);
  const sweep = setInterval(() => {
    ctx.store
      .expireApprovals(ctx.now())
      .then((n) => {
        if (n > 0) ctx.approvalFeed.notify();
      })
      .catch(failed("expiring approvals"));
  }, EXPIRY_SWEEP_MS);
  const checkpoint = setInterval(() => {
    ctx.audit.checkpoint().catch(failed("audit checkpoint"));
  }, config.auditCheckpointSeconds * 1000);
  sweep.unref();
  checkpoint.unref();
  return {
    async stop() {
      clearInterval(sweep);
      clearInterval(checkpoint);
      await ctx.audit.checkpoint().catch(failed("final audit checkpoint"));
    },
  };
}
