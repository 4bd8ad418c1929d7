import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a receiver got. */
export interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** What it was answered. */
  readonly status: number;
}

/** A real HTTP receiver on a loopback port: records every request, answers what `respond` says. */
export interface WebhookReceiver {
  readonly url: string;
  readonly received: Received[];
  /** The status for the next request (by its path and body); 204 by default. */
  respond: (path: string, body: string) => number;
  /** Resolves with the first request (received before or after) `match` accepts. */
  waitFor(match: (r: Received) => boolean, what: string, ms?: number): Promise<Received>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const receiver: WebhookReceiver = {
    url: "",
    received,
    respond: () => 204,
    async waitFor(match, what, ms = 15_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = received.find(match);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`no webhook request ${what} (got ${received.length})`);
        await new Promise<void>((resolve) => {
          const done = () => {
            waiters.delete(done);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(done, 100);
          waiters.add(done);
        });
      }
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const path = req.url ?? "";
      const status = receiver.respond(path, body);
      received.push({ path, headers: req.headers, body, status });
      res.writeHead(status).end();
      for (const wake of [...waiters]) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, { url: `http://127.0.0.1:${port}` });
}
