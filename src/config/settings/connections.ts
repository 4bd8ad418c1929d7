import { integer } from "./types.js";
import { setting } from "./setting.js";

/** Connections and backpressure (grpc-js / HTTP/2 server options), per server process. */
export const CONNECTION_SETTINGS = {
  maxConnections: setting({
    type: integer({ min: 1 }),
    default: 1024,
    env: "CHARTER_MAX_CONNECTIONS",
    description:
      "most open client connections; at the cap a connection that never sent a byte is closed to make room, else the new one is closed",
    reload: "restart",
  }),
  maxConcurrentStreams: setting({
    type: integer({ min: 1 }),
    default: 16,
    env: "CHARTER_MAX_CONCURRENT_STREAMS",
    description:
      "most calls in flight on one connection (HTTP/2 streams): bounds the unread responses one connection can hold",
    reload: "restart",
  }),
  maxSessionMemoryMib: setting({
    type: integer({ min: 1 }),
    default: 8,
    env: "CHARTER_MAX_SESSION_MEMORY_MIB",
    description:
      "memory one connection may use for frames and queued response data, in MiB; past it new calls on it are refused",
    reload: "restart",
  }),
  keepaliveTimeMs: setting({
    type: integer({ min: 1 }),
    default: 60_000,
    env: "CHARTER_KEEPALIVE_TIME_MS",
    description: "interval of server keepalive pings, in ms",
    reload: "restart",
  }),
  keepaliveTimeoutMs: setting({
    type: integer({ min: 1 }),
    default: 20_000,
    env: "CHARTER_KEEPALIVE_TIMEOUT_MS",
    description: "an unanswered ping closes the connection after this long, in ms",
    reload: "restart",
  }),
  connectionIdleMs: setting({
    type: integer({ min: 1 }),
    default: 300_000,
    env: "CHARTER_CONNECTION_IDLE_MS",
    description:
      "a connection without calls is closed after this long, in ms (one that never sends a byte: after 10 s)",
    reload: "restart",
  }),
  connectionAgeMs: setting({
    type: integer({ min: 1 }),
    default: 1_800_000,
    env: "CHARTER_CONNECTION_AGE_MS",
    description: "a connection older than this (ms) is sent GOAWAY (clients reconnect)",
    reload: "restart",
  }),
  connectionAgeGraceMs: setting({
    type: integer({ min: 1 }),
    default: 10_000,
    env: "CHARTER_CONNECTION_AGE_GRACE_MS",
    description: "calls in flight on an aged connection may finish for this long, in ms",
    reload: "restart",
  }),
} as const;
