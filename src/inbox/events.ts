import type { IncomingMessage, ServerResponse } from "node:http";
import { approverActor, watchApprovals, type AuthorityContext } from "../authority/index.js";
import { securityHeaders } from "./http.js";
import type { InboxLog } from "./respond.js";

/** A comment line this often keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;
/** Open streams per signed-in principal (tabs, phones), and in all. */
export const MAX_STREAMS_PER_PRINCIPAL = 8;
export const MAX_STREAMS = 512;

/** The open streams of one inbox, counted per principal. */
export function createStreamCounts(): Map<string, number> {
  return new Map();
}

/**
 * GET /events: the signed-in approver's approval feed as server-sent events (`event: approval`,
 * data `{"id","kind","status","sequence"}` — ids and codes only, no text to escape), from
 * `watchApprovals`; it ends when the browser goes or the inbox stops (`shutdown`).
 */
export function approvalEvents(
  ctx: AuthorityContext,
  principal: string,
  req: IncomingMessage,
  res: ServerResponse,
  options: {
    readonly shutdown: AbortSignal;
    readonly log: InboxLog;
    readonly open: Map<string, number>;
  },
): void {
  const { shutdown, log, open } = options;
  const mine = open.get(principal) ?? 0;
  const total = [...open.values()].reduce((a, b) => a + b, 0);
  if (mine >= MAX_STREAMS_PER_PRINCIPAL || total >= MAX_STREAMS) {
    res.writeHead(429, { ...securityHeaders(), "content-type": "text/plain; charset=utf-8" });
    res.end("too many open event streams; close a tab");
    return;
  }
  open.set(principal, mine + 1);
  const stop = new AbortController();
  const end = () => stop.abort();
  req.once("close", end);
  shutdown.addEventListener("abort", end, { once: true });
  res.writeHead(200, {
    ...securityHeaders(),
    "content-type": "text/event-stream; charset=utf-8",
    connection: "keep-alive",
  });
  res.write(": charter approval feed\n\n");
  const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), HEARTBEAT_MS);
  heartbeat.unref();
  void (async () => {
    try {
      for await (const event of watchApprovals(
        ctx,
        { owner: "" },
        { actor: approverActor(principal), signal: stop.signal },
      )) {
        const data = JSON.stringify({
          id: event.approval.id,
          kind: event.kind,
          status: event.approval.status,
          sequence: event.sequence,
        });
        res.write(`id: ${event.sequence}\nevent: approval\ndata: ${data}\n\n`);
      }
    } catch (err) {
      if (!stop.signal.aborted)
        log.warn({ err: { message: (err as Error).message } }, "inbox event stream failed");
    } finally {
      clearInterval(heartbeat);
      shutdown.removeEventListener("abort", end);
      const left = (open.get(principal) ?? 1) - 1;
      if (left > 0) open.set(principal, left);
      else open.delete(principal);
      res.end();
    }
  })();
}
