import { status } from "@grpc/grpc-js";
import { recordRpcSince, startTimer } from "../telemetry/instruments.js";
import { annotateSpan, traced } from "../telemetry/tracing.js";
import { callStatus } from "./call-context.js";
import type { Interceptor } from "./interceptor.js";

/**
 * Metrics and a trace span for every call that reaches the interceptors: the RPC latency
 * histogram by method and the status the client got, and a `charter.rpc` span (the pipeline
 * stages' spans are its children) carrying the method and the status. A streaming call is
 * measured until its handler has answered the stream, not until the stream ends.
 */
export function telemetryInterceptor(): Interceptor {
  return (next) => (request, ctx) => {
    const started = startTimer();
    return traced(
      "charter.rpc",
      async () => {
        let code = "OK";
        try {
          const out = await next(request, ctx);
          code = status[callStatus(ctx).code];
          return out;
        } catch (err) {
          code = status[callStatus(ctx, err).code];
          throw err;
        } finally {
          annotateSpan({ "rpc.grpc.status_code": code });
          recordRpcSince(ctx.path, code, started);
        }
      },
      { "rpc.system": "grpc", "rpc.method": ctx.path },
    );
  };
}
