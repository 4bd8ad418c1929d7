import { recordStoreSince, startTimer } from "../telemetry/instruments.js";
import { isStoreError, StoreError, type Store } from "./port.js";

/** The operations of a port: every member is a method answering a promise. */
export type Operations<T> = { readonly [K in keyof T]: (...args: never[]) => Promise<unknown> };

/**
 * For each operation, what it is doing when called with these arguments ("store grant g-1"), for
 * error messages. A mapped type over the port, so a new operation without a description (and
 * therefore without a guard) is a compile error.
 */
export type Describers<T extends Operations<T>> = {
  readonly [K in keyof T]: (...args: Parameters<T[K]>) => string;
};

/** The operations of the Store port, without the lifecycle and what the store says of itself. */
export type StoreOperations = Omit<Store, "close" | "traits" | "onAuditAppended">;

/** What each Store operation is doing, for every adapter's error messages ("could not store grant g-1"). */
export const STORE_DOING: Describers<StoreOperations> = {
  putGrant: (grant) => `store grant ${grant.id}`,
  getGrant: (id) => `read grant ${id}`,
  getGrantOrigin: (id) => `read the origin of grant ${id}`,
  revokeGrant: (id) => `revoke grant ${id}`,
  anyRevoked: () => "check revocations",
  pruneGrants: (before) => `prune grants expired before ${before}`,
  listLiveGrants: (afterId) => `list live grants after "${afterId.slice(0, 64)}"`,
  listKeys: () => "list keys",
  insertKey: (key) => `insert key ${key.kid}`,
  insertKeyUnlessActive: (key) => `insert first key ${key.kid}`,
  retireKey: (kid) => `retire key ${kid}`,
  rewrapKey: (kid) => `re-wrap key ${kid}`,
  commitDecision: (record) => `commit decision ${record.decisionId}`,
  getDecision: (id) => `read decision ${id}`,
  readReplayPage: (afterSeq) => `read the decisions to replay after seq ${afterSeq}`,
  pruneDecisionInputs: (before) => `prune decision inputs from before ${before}`,
  getStep: (grantId, runId) => `read a step of run ${runId} of grant ${grantId}`,
  readRun: (query) =>
    query.run === undefined
      ? "read the runs of a call"
      : `read run ${query.run.runId} of grant ${query.run.grantId}`,
  reportResult: (report) => `report the result of decision ${report.decisionId}`,
  createApiKey: (key) => `create api key ${key.id}`,
  listApiKeys: () => "list api keys",
  revokeApiKey: (id) => `revoke api key ${id}`,
  findApiKeyByHash: () => "look up an api key",
  hasActiveApiKey: () => "check for api keys",
  protectedModeEnded: () => "check whether protected mode ended",
  readMeta: (name) => `read store meta ${name}`,
  writeMeta: (name) => `record store meta ${name}`,
  claimMeta: (name) => `claim store meta ${name}`,
  checkIntact: () => "check the store is intact",
  getBudgetUsage: (id) => `read the budget of grant ${id}`,
  createApprovalOnce: (draft) => `create an approval for grant ${draft.approval.grantId}`,
  getApproval: (id) => `read approval ${id}`,
  listApprovals: () => "list approvals",
  decideApproval: (vote) => `decide approval ${vote.approvalId}`,
  expireApprovals: () => "expire approvals",
  supersedeApprovalsOf: () => "supersede approvals",
  approvalEvents: () => "read approval events",
  lastApprovalSequence: () => "read the approval feed",
  createEndorsement: (e) => `create endorsement ${e.id}`,
  getEndorsement: (id) => `read endorsement ${id}`,
  listEndorsements: () => "list endorsements",
  liveEndorsements: (grantId) => `read the endorsements of grant ${grantId}`,
  revokeEndorsement: (id) => `revoke endorsement ${id}`,
  pruneEndorsements: (before) => `prune endorsements expired before ${before}`,
  approveByEndorsements: (call) =>
    `approve a call of grant ${call.draft.approval.grantId} by endorsement`,
  createApprovalLink: (link) => `create a link for approval ${link.approvalId}`,
  getApprovalLink: () => "look up an approval link",
  redeemApprovalLink: () => "redeem an approval link",
  approvalRun: (id) => `read the run of approval ${id}`,
  pruneApprovalLinks: (before) => `prune approval links expired before ${before}`,
  readAudit: () => "read the audit log",
  auditHead: () => "read the audit head",
  putCheckpoint: (cp) => `record audit checkpoint ${cp.seq}`,
  listCheckpoints: () => "list audit checkpoints",
  pruneAudit: (seq) => `prune the audit log before record ${seq}`,
  appendAudit: (draft) => `append a ${draft.kind} audit record`,
};

/** How an adapter's raw operations are guarded. */
export interface GuardOptions {
  /** Names the adapter in messages, e.g. "sqlite store". */
  readonly adapter: string;
  /** Turns whatever an operation threw, other than a StoreError, into one (once, at the adapter's edge). */
  readonly translate: (err: unknown, doing: string) => StoreError;
  /** Releases the adapter's connections; runs on the first close() only. */
  readonly release: () => void | Promise<void>;
  /**
   * Runs before every operation; throwing fails the operation (translated). An adapter uses it to
   * check that what it opened is still there (the SQLite file was not deleted or replaced).
   */
  readonly before?: () => void;
}

/**
 * An adapter's operations made into a port: every operation fails only with a StoreError (what
 * it threw, translated), and fails UNAVAILABLE once the store is closed. close() releases the
 * connections once; a second close is harmless. Only described operations are exposed, and an
 * operation without a description is refused at once, so nothing reaches the port unguarded.
 */
export function guardStore<T extends Operations<T>>(
  ops: T,
  describe: Describers<T>,
  options: GuardOptions,
): T & { close(): Promise<void> } {
  const undescribed = Object.keys(ops).filter((name) => !Object.hasOwn(describe, name));
  if (undescribed.length > 0)
    throw new Error(
      `${options.adapter}: operations without a description: ${undescribed.join(", ")}`,
    );
  let open = true;
  const guarded: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const name of Object.keys(describe) as (keyof T & string)[]) {
    const op = ops[name] as unknown as (...args: unknown[]) => Promise<unknown>;
    const doingOf = describe[name] as (...args: unknown[]) => string;
    guarded[name] = async (...args: unknown[]) => {
      let doing: string = name;
      const started = startTimer();
      try {
        doing = doingOf(...args);
        if (!open)
          throw new StoreError(
            "UNAVAILABLE",
            `${options.adapter} could not ${doing}: the store is closed`,
          );
        options.before?.();
        return await op.apply(ops, args);
      } catch (err) {
        throw isStoreError(err) ? err : options.translate(err, doing);
      } finally {
        recordStoreSince(name, started);
      }
    };
  }
  return {
    ...(guarded as unknown as T),
    async close() {
      if (!open) return;
      open = false;
      try {
        await options.release();
      } catch (err) {
        throw options.translate(err, "close");
      }
    },
  };
}
