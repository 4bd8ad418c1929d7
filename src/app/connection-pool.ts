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
}

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
  authenticated: boolean;
  /** Unread response bytes held for it (0 once it is closed). */
  held: number;
  closed: boolean;
}

/**
 * A pool of connections capped in all and, apart, while pre-auth: a connection is pre-auth until
 * a call on it passes caller authentication (`ConnectionLedger.authenticated`). To make room, the
 * pool closes a pre-auth connection, never an authenticated one: one that has not sent a byte
 * first, else the oldest. An attacker holding every pre-auth slot with idle sessions or sockets
 * that sent one byte therefore cannot keep a new client out: its connection takes the oldest
 * slot, and once its first call authenticates it no longer competes for them. Unread responses
 * are bounded over every connection: past `maxUnreadResponseBytes` the connection holding the
 * most is closed, and what it held is given back as grpc-js destroys its session.
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
  /** The pre-auth connection to close first: a silent one, else the oldest. */
  const evictable = (): Entry | undefined => {
    for (const entry of preAuth) if (entry.socket.bytesRead === 0) return entry;
    return preAuth.values().next().value;
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
      const entry: Entry = { socket, authenticated: false, held: 0, closed: false };
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
