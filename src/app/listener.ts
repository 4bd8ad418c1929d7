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

/**
 * Listens on `host:port` and injects every accepted socket into grpc-js (`createConnectionInjector`,
 * a public grpc-js API), so that Charter owns the listening socket: `net.Server.maxConnections`
 * closes any connection past the cap at once, before it costs a file descriptor for long or any
 * HTTP/2 state. grpc-js has no connection cap of its own.
 */
export function listenCapped(injector: ConnectionInjector, host: string, port: number, maxConnections: number): Promise<CappedListener> {
  const sockets = new Set<Socket>();
  const server: NetServer = createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    injector.injectConnection(socket);
  });
  server.maxConnections = maxConnections;
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
