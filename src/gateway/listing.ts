import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ErrorCode,
  ListToolsResultSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";

/**
 * How much of an upstream's `tools/list` the gateway reads (settings `gatewayMaxListPages`,
 * `gatewayMaxListTools`, `gatewayMaxListBytes`, `gatewayListTimeoutMs`). Past any of them the
 * listing fails closed: no tool is shown and no call is forwarded until a listing fits.
 */
export interface ListingLimits {
  readonly maxPages: number;
  readonly maxTools: number;
  /** The pages' tools and cursors as JSON text, all pages together, in UTF-8 bytes. */
  readonly maxBytes: number;
  /** The whole listing, every page, in ms. */
  readonly timeoutMs: number;
}

/** The settings' defaults (test/config/restated-defaults.test.ts keeps them equal). */
export const DEFAULT_LISTING_LIMITS: ListingLimits = {
  maxPages: 64,
  maxTools: 1024,
  maxBytes: 4 * 1024 * 1024,
  timeoutMs: 10_000,
};

/** An upstream's whole tool listing, or why the gateway would not read it to the end. */
export type Listing =
  | { readonly ok: true; readonly tools: readonly Tool[] }
  | { readonly ok: false; readonly problem: string };

const failed = (problem: string): Listing => ({ ok: false, problem });

/** Every tool the upstream lists, following pagination within `limits`. */
export async function listUpstreamTools(upstream: Client, limits: ListingLimits): Promise<Listing> {
  const tools: Tool[] = [];
  const cursors = new Set<string>();
  const deadline = Date.now() + limits.timeoutMs;
  let bytes = 0;
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    if (page > limits.maxPages)
      return failed(
        `the upstream's tool listing has more than ${limits.maxPages} pages (gatewayMaxListPages)`,
      );
    const left = deadline - Date.now();
    let result;
    try {
      if (left <= 0) throw new Error("out of time");
      result = await upstream.request(
        { method: "tools/list", ...(cursor === undefined ? {} : { params: { cursor } }) },
        ListToolsResultSchema,
        { timeout: left },
      );
    } catch (err) {
      return failed(
        Date.now() >= deadline ||
          (err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number))
          ? `the upstream's tool listing took more than ${limits.timeoutMs} ms (gatewayListTimeoutMs)`
          : `the upstream's tool listing failed: ${(err as Error).message}`,
      );
    }
    tools.push(...result.tools);
    if (tools.length > limits.maxTools)
      return failed(
        `the upstream's tool listing has more than ${limits.maxTools} tools (gatewayMaxListTools)`,
      );
    cursor = result.nextCursor;
    bytes += Buffer.byteLength(JSON.stringify(result.tools)) + Buffer.byteLength(cursor ?? "");
    if (bytes > limits.maxBytes)
      return failed(
        `the upstream's tool listing is larger than ${limits.maxBytes} bytes (gatewayMaxListBytes)`,
      );
    if (cursor === undefined) return { ok: true, tools };
    if (cursors.has(cursor))
      return failed(`the upstream's tool listing repeats the cursor of an earlier page`);
    cursors.add(cursor);
  }
}

/**
 * `list` shared by concurrent callers without ever handing one a listing begun before it asked:
 * at most one runs; callers arriving meanwhile share the next one, started when it ends.
 */
export function freshListings(list: () => Promise<Listing>): () => Promise<Listing> {
  let running: Promise<Listing> | undefined;
  let queued: Promise<Listing> | undefined;
  const start = (): Promise<Listing> => {
    const listing = list().finally(() => {
      if (running === listing) running = undefined;
    });
    running = listing;
    return listing;
  };
  return () => {
    if (queued !== undefined) return queued;
    if (running === undefined) return start();
    const next = running.then(
      () => undefined,
      () => undefined,
    );
    queued = next.then(() => {
      queued = undefined;
      return start();
    });
    return queued;
  };
}
