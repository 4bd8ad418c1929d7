import { integer } from "./types.js";
import { setting } from "./setting.js";

/**
 * `charter mcp-gateway`'s bounds on an upstream's `tools/list`, which it reads for every
 * `tools/list` and every `tools/call` (each call is checked against the tool served now). Past
 * one the listing fails closed: no tool is shown and no call is forwarded.
 */
export const GATEWAY_SETTINGS = {
  gatewayMaxListPages: setting({
    type: integer({ min: 1 }),
    default: 64,
    env: "CHARTER_GATEWAY_MAX_LIST_PAGES",
    description:
      "most pages (`nextCursor` followed) of an upstream's tool listing `charter mcp-gateway` reads; more fails the listing closed",
    reload: "restart",
  }),
  gatewayMaxListTools: setting({
    type: integer({ min: 1 }),
    default: 1024,
    env: "CHARTER_GATEWAY_MAX_LIST_TOOLS",
    description:
      "most tools in an upstream's tool listing, all pages together; more fails the listing closed",
    reload: "restart",
  }),
  gatewayMaxListBytes: setting({
    type: integer({ min: 1 }),
    default: 4 * 1024 * 1024,
    env: "CHARTER_GATEWAY_MAX_LIST_BYTES",
    description:
      "largest upstream tool listing, all pages' tools and cursors as JSON, in bytes; larger fails the listing closed",
    reload: "restart",
  }),
  gatewayListTimeoutMs: setting({
    type: integer({ min: 1 }),
    default: 10_000,
    env: "CHARTER_GATEWAY_LIST_TIMEOUT_MS",
    description:
      "longest an upstream tool listing may take, every page, in ms; a `tools/call` waits at most this long for the listing its pin is checked on",
    reload: "restart",
  }),
} as const;
