import type { Socket } from "node:net";
import type { ConnectionLedger } from "../server/connection-ledger.js";

/** The caps of a connection pool (one per server process, over all its listen addresses). */
export interface ConnectionPoolLimits {
  /** Connections open at once. */
  readonly maxConnections: number;
  /** Of them, connections on which no call has passed caller authentication yet. */
  readonly maxPreAuthConnections: number;
  /** Unary response bytes handed to connections and not yet read, over every connection. */
  readonly maxUnreadResponseBytes: number;
  /**
   * How long a new connection that has not yet been read from counts as arriving rather than
   * silent (default `ARRIVAL_GRACE_MS`).
   */
  readonly arrivalGraceMs?: number;
}

/** How long a connection nothing has been read from yet is taken for one still arriving. */
export const ARRIVAL_GRACE_MS = 1_000;

/** What a pool holds now. */
export interface ConnectionStats {
  readonly open: number;
  readonly preAuth: number;
  readonly unreadResponseBytes: number;
}

/** The open connections of a server process, with the caps that keep any one kind of client from locking the others out. */
export interface ConnectionPool {
  /** Takes `socket` in, making room by closing pre-auth connections; false (and the socket closed) when there is none to close. */
  admit(socket: Socket): boolean;
  readonly ledger: ConnectionLedger;
  stats(): ConnectionStats;
}

interface Entry {
  readonly socket: Socket;
  /** When it was admitted (performance.now()). */
  readonly since: number;
  authenticated: boolean;
  /** Calls on it that arrived whole and are being authenticated now. */
  calling: number;
  /** Unread response bytes held for it (0 once it is closed). */
  held: number;
  closed: boolean;
}

/**
 * A pool of connections capped in all and, apart, while pre-auth: a connection is pre-auth until
 * a call on it passes caller authentication (`ConnectionLedger.authenticated`). To make room, the
 * pool closes a pre-auth connection, never an authenticated one, in this order (oldest first
 * within each rank):
 *
 * 1. silent: nothing read from it for `arrivalGraceMs` since it was admitted;
 * 2. idle: it has sent bytes but has no call being authenticated now (idle HTTP/2 sessions,
 *    one-byte sockets, and callers whose calls were refused);
 * 3. arriving: admitted less than `arrivalGraceMs` ago and not read from yet;
 * 4. calling: a whole call arrived on it and is being authenticated; never closed to make room
 *    (that lasts as long as one authentication, and a call with a bad key ends it at once).
 *    When every pre-auth connection is calling, the pre-auth cap is passed for the moment.
 *
 * Why this order rather than oldest-first or silent-first: before its first call, a new client
 * and an attacker look alike, and an attacker reconnecting in a tight loop keeps its own
 * connections younger than a victim's, so plain oldest-first closed the new client within a few
 * of the attacker's reconnections; silent-first was worse, because every connection is silent
 * until the event loop first reads it, so a burst of accepts closed the ones just accepted. The
 * ranks follow what a connection has done instead of its age: a client's first read brings its
 * preface and call together, the call then holds it in rank 4 until it authenticates, and an
 * attacker cannot stay in rank 4 without a valid credential (with keys) or without becoming an
 * authenticated caller itself (protected mode). A peer-address quota was not chosen: on
 * loopback, where Charter listens by default, attacker and client share 127.0.0.1 (and a local
 * attacker can pick any 127/8 source address). Unread responses are bounded over every
 * connection: past `maxUnreadResponseBytes` the connection holding the most is closed, and what
 * it held is given back as grpc-js destroys its session.
 */
export function createConnectionPool(limits: ConnectionPoolLimits): ConnectionPool {
  const byPeer = new Map<string, Entry>();
  /** Pre-auth connections, oldest first (a Set keeps insertion order). */
  const preAuth = new Set<Entry>();
  let open = 0;
  let unread = 0;

  const close = (entry: Entry) => {
    if (entry.closed) return;
    entry.closed = true;
    unread -= entry.held;
    entry.held = 0;
    preAuth.delete(entry);
    open -= 1;
    entry.socket.destroy();
  };
  const grace = limits.arrivalGraceMs ?? ARRIVAL_GRACE_MS;
  /** The rank of a pre-auth connection in the order it is closed (lower first; 4: never). */
  const rank = (entry: Entry, now: number): number => {
    if (entry.calling > 0) return 4;
    if (entry.socket.bytesRead > 0) return 2;
    return now - entry.since >= grace ? 1 : 3;
  };
  /** The pre-auth connection to close first, if any may be. */
  const evictable = (): Entry | undefined => {
    const now = performance.now();
    let best: Entry | undefined;
    let bestRank = 4;
    // Oldest first (a Set keeps insertion order): a later one replaces it only by a lower rank.
    for (const entry of preAuth) {
      const r = rank(entry, now);
      if (r === 1) return entry;
      if (r < bestRank) [best, bestRank] = [entry, r];
    }
    return best;
  };
  const evictOne = (): boolean => {
    const victim = evictable();
    if (victim === undefined) return false;
    close(victim);
    return true;
  };
  const overUnread = () => {
    while (unread > limits.maxUnreadResponseBytes) {
      let hog: Entry | undefined;
      for (const entry of byPeer.values()) if (entry.held > (hog?.held ?? 0)) hog = entry;
      if (hog === undefined) return;
      close(hog);
    }
  };

  return {
    admit(socket) {
      const peer = peerOf(socket);
      if (peer === undefined || byPeer.has(peer)) {
        socket.destroy();
        return false;
      }
      if (preAuth.size >= limits.maxPreAuthConnections) evictOne();
      if (open >= limits.maxConnections && !evictOne()) {
        socket.destroy();
        return false;
      }
      const entry: Entry = {
        socket,
        since: performance.now(),
        authenticated: false,
        calling: 0,
        held: 0,
        closed: false,
      };
      byPeer.set(peer, entry);
      preAuth.add(entry);
      open += 1;
      socket.once("close", () => {
        close(entry);
        if (byPeer.get(peer) === entry) byPeer.delete(peer);
      });
      return true;
    },
    ledger: {
      authenticated(peer) {
        const entry = byPeer.get(peer);
        if (entry === undefined || entry.authenticated) return;
        entry.authenticated = true;
        preAuth.delete(entry);
      },
      calling(peer) {
        const entry = byPeer.get(peer);
        if (entry === undefined || entry.authenticated) return () => undefined;
        entry.calling += 1;
        let settled = false;
        return () => {
          if (settled) return;
          settled = true;
          entry.calling -= 1;
        };
      },
      holdResponse(peer, bytes) {
        const entry = byPeer.get(peer);
        if (entry === undefined || entry.closed) return () => undefined;
        entry.held += bytes;
        unread += bytes;
        let released = false;
        const release = () => {
          if (released || entry.closed) return;
          released = true;
          entry.held -= bytes;
          unread -= bytes;
        };
        overUnread();
        return release;
      },
    },
    stats: () => ({ open, preAuth: preAuth.size, unreadResponseBytes: unread }),
  };
}

/** `address:port` as grpc-js's `getPeer()` names the same connection; undefined once it is closed. */
export function peerOf(socket: Socket): string | undefined {
  const { remoteAddress, remotePort } = socket;
  if (remoteAddress === undefined) return undefined;
  return remotePort === undefined ? remoteAddress : `${remoteAddress}:${remotePort}`;
}
