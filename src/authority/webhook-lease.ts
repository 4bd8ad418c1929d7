import type { StoreMetaStore } from "../store/port.js";

/** The `store_meta` name of the deliverers' lease. */
export const WEBHOOK_LEASE_META = "webhook_lease";

/** How long a lease holds without renewal, in ms; renewed when half of it is left. */
export const WEBHOOK_LEASE_MS = 15_000;

/** Which process delivers webhooks now: one lease for every process sharing the store. */
export interface WebhookLease {
  /** Whether this process holds the lease (taking or renewing it when it may). */
  held(): Promise<boolean>;
  /** Gives the lease up, when held, so another process (or this one restarted) takes it at once. */
  release(): Promise<void>;
}

interface LeaseValue {
  readonly holder: string;
  /** Epoch ms. */
  readonly until: number;
}

function parse(text: string | undefined): LeaseValue | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text) as Partial<LeaseValue>;
    return typeof v.holder === "string" && typeof v.until === "number"
      ? { holder: v.holder, until: v.until }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A lease in the meta table: free, expired or ours → written as ours, then read back (of two
 * replicas writing at once, the one whose value stayed holds it; the other sees it at its next
 * renewal at the latest). The meta table has no compare-and-set, so two replicas may both deliver
 * for at most one renewal interval: deliveries are at-least-once anyway. Clocks of replicas are
 * compared (epoch ms): keep them in sync.
 */
export function createWebhookLease(
  store: StoreMetaStore,
  holder: string,
  nowMs: () => number = () => Date.now(),
  ttlMs = WEBHOOK_LEASE_MS,
): WebhookLease {
  let until = 0;
  let taking: Promise<boolean> | undefined;
  const take = async (): Promise<boolean> => {
    const t = nowMs();
    if (until - t > ttlMs / 2) return true;
    const current = parse(await store.readMeta(WEBHOOK_LEASE_META));
    if (current !== undefined && current.holder !== holder && current.until > t) {
      until = 0;
      return false;
    }
    await store.writeMeta(WEBHOOK_LEASE_META, JSON.stringify({ holder, until: t + ttlMs }));
    if (parse(await store.readMeta(WEBHOOK_LEASE_META))?.holder !== holder) {
      until = 0;
      return false;
    }
    until = t + ttlMs;
    return true;
  };
  return {
    held() {
      taking ??= take().finally(() => {
        taking = undefined;
      });
      return taking;
    },
    async release() {
      if (until === 0) return;
      until = 0;
      if (parse(await store.readMeta(WEBHOOK_LEASE_META))?.holder === holder)
        await store.writeMeta(WEBHOOK_LEASE_META, JSON.stringify({ holder: "", until: 0 }));
    },
  };
}
