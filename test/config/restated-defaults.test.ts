import { describe, expect, it } from "vitest";
import { DEFAULT_AUTHORITY_LIMITS } from "../../src/authority/index.js";
import { DEFAULT_ARGUMENT_LIMITS } from "../../src/core/call-request.js";
import { DEFAULT_SCHEMAS_PER_GENERATION } from "../../src/core/schema.js";
import { DEFAULTS, MAX_TOKEN_BYTES_CEILING } from "../../src/config/config.js";
import { DEFAULT_LISTING_LIMITS } from "../../src/gateway/listing.js";
import { DEFAULT_REQUEST_LIMITS } from "../../src/server/request-limits.js";
import { MAX_TOKEN_LENGTH } from "../../src/token/index.js";
import { DEFAULT_RECEIPT_TTL_SECONDS } from "../../src/token/receipt.js";
import { DEFAULT_VERIFIER_BYTES, DEFAULT_VERIFIER_ENTRIES } from "../../src/token/verifier.js";

// The layers below src/config (core, token, authority, server) keep their own defaults for when
// they are used without a configuration (tests, benchmarks, embedding). The layer rules forbid
// them to import the settings' schema, so this pins each to the schema's default: a default
// changed in one place and not the other fails here.

describe("defaults the lower layers restate", () => {
  it("are the settings' defaults", () => {
    expect({
      maxArgumentsBytes: DEFAULT_ARGUMENT_LIMITS.maxBytes,
      maxArgumentsDepth: DEFAULT_ARGUMENT_LIMITS.maxDepth,
      schemaCacheSize: DEFAULT_SCHEMAS_PER_GENERATION,
      receiptTtlSeconds: DEFAULT_RECEIPT_TTL_SECONDS,
      tokenCacheSize: DEFAULT_VERIFIER_ENTRIES,
      tokenCacheBytes: DEFAULT_VERIFIER_BYTES,
      maxTokenBytes: DEFAULT_AUTHORITY_LIMITS.maxTokenBytes,
    }).toEqual({
      maxArgumentsBytes: DEFAULTS.maxArgumentsBytes,
      maxArgumentsDepth: DEFAULTS.maxArgumentsDepth,
      schemaCacheSize: DEFAULTS.schemaCacheSize,
      receiptTtlSeconds: DEFAULTS.receiptTtlSeconds,
      tokenCacheSize: DEFAULTS.tokenCacheSize,
      tokenCacheBytes: DEFAULTS.tokenCacheBytes,
      maxTokenBytes: DEFAULTS.maxTokenBytes,
    });
    expect(DEFAULT_AUTHORITY_LIMITS.arguments).toEqual({
      maxBytes: DEFAULTS.maxArgumentsBytes,
      maxDepth: DEFAULTS.maxArgumentsDepth,
    });
  });

  it("include the transport's request limits", () => {
    expect(DEFAULT_REQUEST_LIMITS).toEqual({
      fieldLength: DEFAULTS.maxFieldLength,
      textLength: DEFAULTS.maxTextLength,
      tokenBytes: DEFAULTS.maxTokenBytes,
      argumentsBytes: DEFAULTS.maxArgumentsBytes,
      listItems: DEFAULTS.maxListItems,
      batch: DEFAULTS.maxBatch,
    });
  });

  it("include the MCP gateway's bounds on an upstream's tool listing", () => {
    expect(DEFAULT_LISTING_LIMITS).toEqual({
      maxPages: DEFAULTS.gatewayMaxListPages,
      maxTools: DEFAULTS.gatewayMaxListTools,
      maxBytes: DEFAULTS.gatewayMaxListBytes,
      timeoutMs: DEFAULTS.gatewayListTimeoutMs,
    });
  });

  it("cap maxTokenBytes at the token layer's own ceiling", () => {
    expect(MAX_TOKEN_BYTES_CEILING).toBe(MAX_TOKEN_LENGTH);
  });
});
