import { createServer, type Server as NetServer } from "node:net";
import type { ConnectionInjector } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { ConnectionPool } from "./connection-pool.js";
import type { ListenPlan } from "./listen.js";

/** A TCP listener that hands its connections to grpc-js, admitted by a connection pool. */
export interface CappedListener {
  readonly port: number;
  /** Stops accepting; open connections are left to grpc-js's shutdown. */
  close(): Promise<void>;
}

/** How long a new connection may take to send the HTTP/2 client preface (24 bytes) before it is closed. */
export const SILENT_CONNECTION_MS = 10_000;

/** The HTTP/2 client connection preface, in bytes (RFC 9113 §3.4). */
const PREFACE_BYTES = 24;

/**
 * Listens on `host:port` and injects every socket `pool` admits into grpc-js
 * (`createConnectionInjector`, a public grpc-js API), so that Charter owns the listening socket
 * and caps connections (grpc-js has no cap of its own; see `createConnectionPool` for who is
 * closed to make room). A connection that has not sent a whole HTTP/2 preface within `silentMs`
 * (silent, or one byte and then nothing) is closed; one that spoke and then idles is grpc-js's
 * (`grpc.max_connection_idle_ms`).
 */
export function listenCapped(
  injector: ConnectionInjector,
  host: string,
  port: number,
  pool: ConnectionPool,
  silentMs = SILENT_CONNECTION_MS,
): Promise<CappedListener> {
  const server: NetServer = createServer({ noDelay: true }, (socket) => {
    socket.on("error", () => undefined);
    if (!pool.admit(socket)) return;
    const timer = setTimeout(() => {
      if (socket.bytesRead < PREFACE_BYTES) socket.destroy();
    }, silentMs);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
    injector.injectConnection(socket);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port }, () => {
      server.off("error", reject);
      const address = server.address();
      resolve({
        port: typeof address === "object" && address !== null ? address.port : port,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

/**
 * Listens on every planned address (literally, so nothing is resolved again), all admitted by
 * one connection pool, and hands the connections to grpc-js through one injector (so TLS, when
 * configured, is the injector's). With port 0 the first listener picks the port and the others
 * reuse it; a second address that fails (IPv6 off, say) is logged and skipped.
 */
export async function bindAll(
  injector: ConnectionInjector,
  plan: ListenPlan,
  pool: ConnectionPool,
  log: Logger,
): Promise<{ port: number; address: string; listeners: CappedListener[] }> {
  const bracket = (a: string) => (a.includes(":") ? `[${a}]` : a);
  const [first, ...rest] = plan.addresses as [string, ...string[]];
  const listeners = [await listenCapped(injector, first, plan.port, pool)];
  const port = (listeners[0] as CappedListener).port;
  for (const address of rest) {
    await listenCapped(injector, address, port, pool).then(
      (l) => listeners.push(l),
      (err: unknown) =>
        log.warn(
          { address, err: { message: (err as Error).message } },
          "could not bind one of the listen addresses",
        ),
    );
  }
  return { port, address: `${bracket(first)}:${port}`, listeners };
}
