/**
 * What the transport tells whoever owns the connections about one of them, named by its peer
 * (`address:port`, as grpc-js's `getPeer()` gives it). The listener (`src/app/connection-pool.ts`)
 * implements it; without one, nothing is told.
 */
export interface ConnectionLedger {
  /** A call on the connection passed caller authentication: it is no longer pre-auth. */
  authenticated(peer: string): void;
  /**
   * A whole call arrived on the connection and its caller is being authenticated; the returned
   * function says that is settled (passed or refused). Meanwhile the connection is not closed to
   * make room for others.
   */
  calling(peer: string): () => void;
  /**
   * A unary response of `bytes` was handed to the connection; the returned function says its
   * stream closed (the client read it, or went). Past the bound on such bytes over every
   * connection, the connection holding the most is closed.
   */
  holdResponse(peer: string, bytes: number): () => void;
}

/** Tells no one (a server without a connection pool: tests that bind services alone). */
export const NO_LEDGER: ConnectionLedger = {
  authenticated: () => undefined,
  calling: () => () => undefined,
  holdResponse: () => () => undefined,
};
