import { DEFAULT_ARGUMENT_LIMITS } from "../../core/call-request.js";
import { DEFAULT_SCHEMAS_PER_GENERATION } from "../../core/schema.js";
import { integer } from "./types.js";
import { setting } from "./setting.js";

/** The token layer's own ceiling on a token's length (`MAX_TOKEN_LENGTH`): maxTokenBytes may not exceed it. */
export const MAX_TOKEN_BYTES_CEILING = 256 * 1024;

/** Hard limits on hostile input (a request over one is refused before work is done) and the caches' bounds. */
export const LIMIT_SETTINGS = {
  maxMessageBytes: setting({
    type: integer({ min: 1 }),
    default: 1024 * 1024,
    env: "CHARTER_MAX_MESSAGE_BYTES",
    description:
      "largest request or response message, in bytes: a larger request is refused with RESOURCE_EXHAUSTED (by grpc-js, from the length prefix), a larger response fails RESOURCE_EXHAUSTED",
    reload: "restart",
  }),
  maxBatch: setting({
    type: integer({ min: 1 }),
    default: 256,
    env: "CHARTER_MAX_BATCH",
    description: "most calls in one BatchAuthorize",
    reload: "restart",
  }),
  maxArgumentsBytes: setting({
    type: integer({ min: 1 }),
    default: DEFAULT_ARGUMENT_LIMITS.maxBytes,
    env: "CHARTER_MAX_ARGUMENTS_BYTES",
    description: "largest `arguments_json` of one call, in UTF-8 bytes",
    reload: "restart",
  }),
  maxArgumentsDepth: setting({
    type: integer({ min: 1 }),
    default: DEFAULT_ARGUMENT_LIMITS.maxDepth,
    env: "CHARTER_MAX_ARGUMENTS_DEPTH",
    description: "deepest nesting of arrays and objects in a call's arguments",
    reload: "restart",
  }),
  maxFieldLength: setting({
    type: integer({ min: 1 }),
    default: 256,
    env: "CHARTER_MAX_FIELD_LENGTH",
    description:
      "longest id or name field of any request (call_id, tool_name, action_id, profile, subject, owner, grant_id, requested action…), in characters",
    reload: "restart",
  }),
  maxTextLength: setting({
    type: integer({ min: 1 }),
    default: 4096,
    env: "CHARTER_MAX_TEXT_LENGTH",
    description: "longest free-text field (purpose, note, reason), in characters",
    reload: "restart",
  }),
  maxTokenBytes: setting({
    type: integer({ min: 1, max: MAX_TOKEN_BYTES_CEILING }),
    default: 64 * 1024,
    env: "CHARTER_MAX_TOKEN_BYTES",
    description: "largest grant token accepted in a request or issued, in bytes",
    reload: "restart",
  }),
  maxListItems: setting({
    type: integer({ min: 1 }),
    default: 256,
    env: "CHARTER_MAX_LIST_ITEMS",
    description:
      "most entries of a repeated request field other than batch items (requested_actions…)",
    reload: "restart",
  }),
  tokenCacheSize: setting({
    type: integer({ min: 0 }),
    default: 10_000,
    env: "CHARTER_TOKEN_CACHE_SIZE",
    description:
      "verified grant tokens remembered, so Authorize skips repeated signature checks (the time window is still checked every call); 0 turns the cache off",
    reload: "restart",
  }),
  tokenCacheBytes: setting({
    type: integer({ min: 0 }),
    default: 64 * 1024 * 1024,
    env: "CHARTER_TOKEN_CACHE_BYTES",
    description:
      "the memory the verified-token cache may hold, all told: the cached grants (each counted by a measured upper bound of what it holds) and the ids and caveat records they share (at most an eighth of it); 0 turns it off",
    reload: "restart",
  }),
  schemaCacheSize: setting({
    type: integer({ min: 1 }),
    default: DEFAULT_SCHEMAS_PER_GENERATION,
    env: "CHARTER_SCHEMA_CACHE_SIZE",
    description:
      "compiled argument validators per generation; two generations are kept, older ones dropped whole",
    reload: "restart",
  }),
} as const;
