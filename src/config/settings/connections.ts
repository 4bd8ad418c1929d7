import { integer } from "./types.js";
import { setting } from "./setting.js";

/** Connections and backpressure (grpc-js / HTTP/2 server options), per server process. */
export const CONNECTION_SETTINGS = {
  maxConnections: setting({
    type: integer({ min: 1 }),
    default: 1024,
    env: "CHARTER_MAX_CONNECTIONS",
    description:
      "most open client connections; at the cap a connection that has made no authenticated call is closed to make room (silent ones first, then idle ones, then ones not read yet; never one whose call is being authenticated), else the new one is closed",
    reload: "restart",
  }),
  maxPreAuthConnections: setting({
    type: integer({ min: 1 }),
    default: 256,
    env: "CHARTER_MAX_PRE_AUTH_CONNECTIONS",
    description:
      "most open connections that have made no authenticated call yet; past it one of them is closed (silent ones first, then idle ones, then ones not read yet, oldest first in each), so an authenticated client always gets a connection",
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
  maxUnreadResponseMib: setting({
    type: integer({ min: 1 }),
    default: 128,
    env: "CHARTER_MAX_UNREAD_RESPONSE_MIB",
    description:
      "unary responses sent but not yet read by their clients, in MiB, over all connections; past it the connection holding the most is closed",
    reload: "restart",
  }),
  maxWatchStreams: setting({
    type: integer({ min: 1 }),
    default: 1024,
    env: "CHARTER_MAX_WATCH_STREAMS",
    description:
      "most WatchApprovals streams open at once in one server process; past it a new one is refused RESOURCE_EXHAUSTED",
    reload: "restart",
  }),
  maxWatchStreamsPerCaller: setting({
    type: integer({ min: 1 }),
    default: 32,
    env: "CHARTER_MAX_WATCH_STREAMS_PER_CALLER",
    description:
      "most WatchApprovals streams one caller (principal) may have open at once in one server process; past it a new one is refused RESOURCE_EXHAUSTED",
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
      "a connection without calls is closed after this long, in ms (one that has not sent the HTTP/2 preface: after 10 s)",
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
