import { status } from "@grpc/grpc-js";
import { recordRpcSince, startTimer } from "../telemetry/instruments.js";
import { annotateSpan, traced, tracingActive } from "../telemetry/tracing.js";
import { callStatus, type CallContext } from "./call-context.js";
import type { Interceptor } from "./interceptor.js";
import type { GrpcStatus } from "./rpc-error.js";

/**
 * Metrics and a trace span for every call that reaches the interceptors: the RPC latency
 * histogram by method and the status the client got, and a `charter.rpc` span (the pipeline
 * stages' spans are its children) carrying the method and the status. A streaming call is
 * measured until its handler has answered the stream, not until the stream ends. With tracing
 * off no span is started and no attributes are built.
 */
export function telemetryInterceptor(): Interceptor {
  return (next) => (request, ctx) => {
    const started = startTimer();
    const measured = () =>
      next(request, ctx).then(
        (out) => {
          ended(ctx, callStatus(ctx), started);
          return out;
        },
        (err: unknown) => {
          ended(ctx, callStatus(ctx, err), started);
          throw err;
        },
      );
    return tracingActive()
      ? traced("charter.rpc", measured, { "rpc.system": "grpc", "rpc.method": ctx.path })
      : measured();
  };
}

function ended(ctx: CallContext, s: GrpcStatus, started: number): void {
  const code = status[s.code];
  if (tracingActive()) annotateSpan({ "rpc.grpc.status_code": code });
  recordRpcSince(ctx.path, code, started);
}
