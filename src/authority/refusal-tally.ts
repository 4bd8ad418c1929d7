import type { AuthorityContext } from "./context.js";

/** A call refused before anyone was authenticated (UNAUTHENTICATED): where from, to what, and why. */
export interface UnauthenticatedRefusal {
  /** The transport's peer (`127.0.0.1:53122`, `[::1]:53122`, `ipv4:…`); its port is dropped. */
  readonly peer?: string | undefined;
  /** The RPC path, e.g. `/charter.v1.GrantService/IssueGrant`. */
  readonly rpc: string;
  /** Why, in words, from a closed set ("no credentials", "an unknown, revoked or malformed API key", …). */
  readonly detail: string;
  /** The SPIFFE ID of a refused certificate, when it was a valid one; never a key. */
  readonly caller?: string;
}

/**
 * Refused calls from unauthenticated callers, aggregated: one `call.unauthenticated` record per
 * (peer address, RPC, reason) and interval, carrying `count` and the `first`/`last` time, so a
 * flood writes a bounded number of records per interval however fast it calls.
 */
export interface RefusalTally {
  /**
   * Counts one refusal. The first of its key since the key was last idle for a whole interval is
   * written at once (the promise settles when it is on the log); the others of the interval are
   * only counted (settled at once, no store write) and written with the next tick.
   */
  refused(refusal: UnauthenticatedRefusal): Promise<void>;
  /** Writes every count still pending now (serialised with the periodic tick). */
  flush(): Promise<void>;
  /** Stops the timer and flushes: the counts written then sum to every refusal counted. */
  close(): Promise<void>;
}

export interface RefusalTallyOptions {
  /** How often counted refusals are written, in milliseconds (`auditRefusalIntervalMs`). */
  readonly intervalMs: number;
  /** The most (peer, RPC, reason) keys held; past it a refusal is counted under its reason alone. */
  readonly maxKeys?: number;
  /** Told when a periodic write fails (the counts are kept and written with the next tick). */
  readonly onError?: (err: unknown) => void;
}

/** The most distinct keys a tally holds by default. */
export const DEFAULT_REFUSAL_KEYS = 1024;
/** The peer and RPC of the record a refusal is counted in when the tally holds its most keys. */
export const OVERFLOW = "*";

interface Tally {
  readonly peer: string;
  readonly rpc: string;
  readonly detail: string;
  readonly caller: string | undefined;
  /** Refusals counted and not yet written. */
  pending: number;
  first: number;
  last: number;
}

/** Aggregates unauthenticated refusals into the audit log of `ctx` (see `RefusalTally`). */
export function createRefusalTally(
  ctx: Pick<AuthorityContext, "store" | "now">,
  options: RefusalTallyOptions,
): RefusalTally {
  const maxKeys = options.maxKeys ?? DEFAULT_REFUSAL_KEYS;
  const keys = new Map<string, Tally>();
  // One key per reason past `maxKeys`: the reasons are a closed set, so this stays small.
  const overflow = new Map<string, Tally>();
  let closed = false;
  let writing: Promise<void> = Promise.resolve();

  const write = (t: Tally, count: number, first: number, last: number): Promise<number> =>
    ctx.store.appendAudit({
      at: ctx.now(),
      kind: "call.unauthenticated",
      rpc: t.rpc,
      peer: t.peer,
      ...(t.caller === undefined ? {} : { caller: t.caller }),
      detail: t.detail,
      count,
      first,
      last,
    });

  /** Writes each pending count once; a key idle for a whole interval is dropped. */
  const drain = async (dropIdle: boolean): Promise<void> => {
    const writes: Promise<unknown>[] = [];
    for (const table of [keys, overflow]) {
      for (const [key, t] of table) {
        if (t.pending === 0) {
          if (dropIdle) table.delete(key);
          continue;
        }
        const { pending, first, last } = t;
        t.pending = 0;
        writes.push(
          write(t, pending, first, last).catch((err: unknown) => {
            // Kept, so the next tick writes it: nothing counted is lost to a failed write.
            t.first = t.pending === 0 ? first : Math.min(first, t.first);
            t.last = Math.max(last, t.last);
            t.pending += pending;
            if (!table.has(key)) table.set(key, t);
            throw err;
          }),
        );
      }
    }
    const failed = (await Promise.allSettled(writes)).find((r) => r.status === "rejected");
    if (failed?.status === "rejected") throw failed.reason;
  };
  const serialised = (dropIdle: boolean): Promise<void> => {
    const next = writing.then(() => drain(dropIdle));
    writing = next.catch(() => undefined);
    return next;
  };

  const timer = setInterval(() => {
    serialised(true).catch((err: unknown) => options.onError?.(err));
  }, options.intervalMs);
  timer.unref();

  return {
    refused(refusal) {
      const now = ctx.now();
      const peer = peerAddress(refusal.peer);
      const rpc = refusal.rpc.slice(0, 200);
      const key = JSON.stringify([peer, rpc, refusal.detail, refusal.caller ?? null]);
      let t = keys.get(key);
      if (t === undefined && keys.size >= maxKeys) t = overflow.get(refusal.detail);
      if (t !== undefined && !closed) {
        if (t.pending === 0) t.first = now;
        t.pending += 1;
        t.last = now;
        return Promise.resolve();
      }
      const capped = keys.size >= maxKeys;
      const fresh: Tally = {
        peer: capped ? OVERFLOW : peer,
        rpc: capped ? OVERFLOW : rpc,
        detail: refusal.detail,
        caller: capped ? undefined : refusal.caller,
        pending: 0,
        first: now,
        last: now,
      };
      // Held before the write, so the calls that arrive while it is written are counted, not written.
      if (!closed) {
        if (capped) overflow.set(refusal.detail, fresh);
        else keys.set(key, fresh);
      }
      return write(fresh, 1, now, now).then(() => undefined);
    },
    flush: () => serialised(false),
    async close() {
      closed = true;
      clearInterval(timer);
      await serialised(false);
    },
  };
}

/**
 * The address of a transport peer without its port: `127.0.0.1:53122` -> `127.0.0.1`,
 * `[::1]:53122` -> `::1`, `ipv6:[::1]:53122` -> `::1`; anything else as it is (at most 100
 * characters); `unknown` when the transport does not say.
 */
export function peerAddress(peer: string | undefined): string {
  if (peer === undefined || peer === "") return "unknown";
  const bare = peer.replace(/^ipv[46]:/, "");
  const bracketed = /^\[([^\]]*)\](?::\d+)?$/.exec(bare);
  if (bracketed?.[1] !== undefined) return bracketed[1].slice(0, 100);
  const hostPort = /^([^:]*):\d+$/.exec(bare);
  return (hostPort?.[1] ?? bare).slice(0, 100);
}
