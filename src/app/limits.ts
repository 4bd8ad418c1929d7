import type { ServerOptions } from "@grpc/grpc-js";
import type { CharterConfig } from "../config/config.js";
import type { RequestLimits } from "../server/request-limits.js";

/** The transport's request limits from the configuration. */
export function requestLimits(config: CharterConfig): RequestLimits {
  return {
    fieldLength: config.maxFieldLength,
    textLength: config.maxTextLength,
    tokenBytes: config.maxTokenBytes,
    argumentsBytes: config.maxArgumentsBytes,
    listItems: config.maxListItems,
    batch: config.maxBatch,
  };
}

/**
 * grpc-js server options from the configuration: message sizes, HTTP/2 streams per connection,
 * the memory one connection may hold for frames and unread responses (past it, nghttp2 refuses
 * new streams on that connection), keepalive pings, and idle and age limits on connections.
 * Channelz (grpc-js's introspection counters, which no Charter service exposes) is off: with it on,
 * grpc-js keeps per-call trackers and timestamps on every call.
 */
export function serverOptions(config: CharterConfig): ServerOptions {
  return {
    "grpc.enable_channelz": 0,
    "grpc.max_receive_message_length": config.maxMessageBytes,
    "grpc.max_send_message_length": config.maxMessageBytes,
    "grpc.max_concurrent_streams": config.maxConcurrentStreams,
    "grpc-node.max_session_memory": config.maxSessionMemoryMib,
    "grpc.keepalive_time_ms": config.keepaliveTimeMs,
    "grpc.keepalive_timeout_ms": config.keepaliveTimeoutMs,
    "grpc.max_connection_idle_ms": config.connectionIdleMs,
    "grpc.max_connection_age_ms": config.connectionAgeMs,
    "grpc.max_connection_age_grace_ms": config.connectionAgeGraceMs,
  };
}
