import { createServer, type Server as NetServer, type Socket } from "node:net";
import type { ConnectionInjector } from "@grpc/grpc-js";

/** A TCP listener that hands its connections to grpc-js, with a cap on how many are open. */
export interface CappedListener {
  readonly port: number;
  /** Connections open now. */
  connections(): number;
  /** Stops accepting; open connections are left to grpc-js's shutdown. */
  close(): Promise<void>;
}

/** How long a new connection may stay silent (not a byte of the HTTP/2 preface) before it is closed. */
export const SILENT_CONNECTION_MS = 10_000;

/**
 * Listens on `host:port` and injects every accepted socket into grpc-js (`createConnectionInjector`,
 * a public grpc-js API), so that Charter owns the listening socket and caps connections (grpc-js
 * has no cap of its own). At the cap, a connection that has never sent a byte is closed to make
 * room (oldest first), so silent sockets cannot lock real clients out; with none, the new
 * connection is closed at once. A connection silent for `silentMs` is closed anyway; one that
 * spoke and then idles is grpc-js's (`grpc.max_connection_idle_ms`).
 */
export function listenCapped(
  injector: ConnectionInjector,
  host: string,
  port: number,
  maxConnections: number,
  silentMs = SILENT_CONNECTION_MS,
): Promise<CappedListener> {
  const sockets = new Set<Socket>();
  const server: NetServer = createServer({ noDelay: true }, (socket) => {
    socket.on("error", () => undefined);
    if (sockets.size >= maxConnections) {
      const silent = [...sockets].find((s) => s.bytesRead === 0);
      if (!silent) {
        socket.destroy();
        return;
      }
      silent.destroy();
      sockets.delete(silent);
    }
    sockets.add(socket);
    const timer = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, silentMs);
    timer.unref();
    socket.once("close", () => {
      clearTimeout(timer);
      sockets.delete(socket);
    });
    injector.injectConnection(socket);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port }, () => {
      server.off("error", reject);
      const address = server.address();
      resolve({
        port: typeof address === "object" && address !== null ? address.port : port,
        connections: () => sockets.size,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
