import type { Http2Server, IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import {
  Metadata,
  ServerInterceptingCall,
  ServerListenerBuilder,
  status,
  type ConnectionInjector,
  type Server,
  type ServerCredentials,
  type ServerInterceptor,
} from "@grpc/grpc-js";

/**
 * Request framing the transport refuses with INVALID_ARGUMENT before any handler runs (so nothing
 * is decided, recorded or spent): a unary or server-streaming call with no request message or a
 * second one, and a `grpc-timeout` header that is not 1 to 8 digits and one unit (gRPC over HTTP/2,
 * "Timeout"). grpc-js on its own answers UNIMPLEMENTED for the first two and INTERNAL for a timeout
 * without digits, and quietly reads a valid-looking part out of others ("99999999999H", "-1m": its
 * pattern is not anchored).
 */

/** The status detail of a call with a missing or extra request message. */
export const ONE_MESSAGE_DETAIL = "expected exactly one request message";

/** The status detail of a call whose `grpc-timeout` header is malformed. */
export const BAD_TIMEOUT_DETAIL =
  "malformed grpc-timeout header: expected 1 to 8 digits and one unit of H, M, S, m, u, n";

const GRPC_TIMEOUT = /^\d{1,8}[HMSmun]$/;

/** Whether a `grpc-timeout` header value (absent allowed) is well formed. */
export function isValidGrpcTimeout(value: string | string[] | undefined): boolean {
  return value === undefined || (typeof value === "string" && GRPC_TIMEOUT.test(value));
}

/**
 * A grpc-js server interceptor (public API: `ServerOptions.interceptors`) that counts the request
 * messages of a call whose method takes one: a second message, or a half-close before any, ends the
 * call INVALID_ARGUMENT without passing it on, so grpc-js's own unary/server-streaming handling
 * never sees it. A valid call pays one counter: no message is read or parsed here (Charter's
 * deserializer is the identity; the body is decoded in the handler).
 */
export const requestFramingInterceptor: ServerInterceptor = (method, call) => {
  if (method.requestStream) return new ServerInterceptingCall(call);
  let messages = 0;
  let refused = false;
  const refuse = () => {
    refused = true;
    framed.sendStatus({
      code: status.INVALID_ARGUMENT,
      details: ONE_MESSAGE_DETAIL,
      metadata: new Metadata(),
    });
  };
  const framed: ServerInterceptingCall = new ServerInterceptingCall(call, {
    start: (next) =>
      next(
        new ServerListenerBuilder()
          .withOnReceiveMessage((message, pass) => {
            if (refused) return;
            messages += 1;
            if (messages > 1) refuse();
            else pass(message);
          })
          .withOnReceiveHalfClose((pass) => {
            if (refused) return;
            if (messages === 0) refuse();
            else pass();
          })
          .build(),
      ),
  });
  return framed;
};

type StreamListener = (
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  ...rest: unknown[]
) => void;

/** Ends `stream` trailers-only with INVALID_ARGUMENT and `detail`, reading and dropping its body. */
function refuseStream(stream: ServerHttp2Stream, detail: string): void {
  stream.on("error", () => undefined);
  if (!stream.headersSent && !stream.destroyed) {
    stream.respond(
      {
        ":status": 200,
        "content-type": "application/grpc+proto",
        "grpc-status": String(status.INVALID_ARGUMENT),
        "grpc-message": encodeURIComponent(detail),
      },
      { endStream: true },
    );
  }
  stream.resume();
}

/**
 * The http2 servers a grpc-js `Server` holds. PRIVATE grpc-js detail (1.14): `Server.http2Servers`,
 * a Map keyed by the `http2.Http2Server` each listener or connection injector creates, on which
 * grpc-js registers exactly one 'stream' listener (`_setupHandlers`). `guardedConnectionInjector`
 * throws when that no longer holds, and test/server/request-framing.test.ts pins it, so a grpc-js
 * upgrade that changes it fails loudly instead of silently dropping the check.
 */
function http2ServersOf(server: Server): Http2Server[] {
  const servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map))
    throw new Error(
      "request framing: @grpc/grpc-js no longer keeps Server.http2Servers; the grpc-timeout check cannot be installed",
    );
  return [...(servers as Map<Http2Server, unknown>).keys()];
}

/**
 * `server.createConnectionInjector(credentials)` with a `grpc-timeout` check in front of grpc-js:
 * grpc-js's 'stream' listener on the http2 server the injector created is replaced by one that
 * refuses a stream with a malformed `grpc-timeout` (INVALID_ARGUMENT, before grpc-js parses the
 * header or looks up a handler) and hands every other stream, unchanged, to grpc-js. A valid call
 * pays one header lookup and, when it has a timeout, one anchored pattern test.
 */
export function guardedConnectionInjector(
  server: Server,
  credentials: ServerCredentials,
): ConnectionInjector {
  const before = new Set(http2ServersOf(server));
  const injector = server.createConnectionInjector(credentials);
  const created = http2ServersOf(server).filter((s) => !before.has(s));
  const [http2] = created;
  const listeners = http2?.listeners("stream") ?? [];
  const [grpcListener] = listeners;
  if (http2 === undefined || created.length !== 1 || listeners.length !== 1 || !grpcListener) {
    injector.destroy();
    throw new Error(
      `request framing: expected grpc-js to create one http2 server with one 'stream' listener, found ${created.length} server(s) and ${listeners.length} listener(s)`,
    );
  }
  const passOn = grpcListener as StreamListener;
  http2.removeListener("stream", passOn);
  http2.on(
    "stream",
    (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => {
      if (!isValidGrpcTimeout(headers["grpc-timeout"])) {
        refuseStream(stream, BAD_TIMEOUT_DETAIL);
        return;
      }
      passOn.call(http2, stream, headers, ...rest);
    },
  );
  return injector;
}
