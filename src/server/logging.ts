import { status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { callStatus } from "./call-context.js";
import { runStep, type AnyResponse, type Interceptor } from "./interceptor.js";
import type { GrpcStatus } from "./rpc-error.js";

/**
 * Logs one JSON line per call when it ends: method, the status the client got, and the duration;
 * never a token, a metadata value or an argument value. A server fault is logged at error level
 * with its cause.
 */
export function loggingInterceptor(log: Logger): Interceptor {
  return (next) => (request, ctx) => {
    const started = performance.now();
    return runStep(next, request, ctx).then(
      (answer) => {
        if (!answer.stream) {
          logRpc(log, ctx.path, callStatus(ctx), started);
          return answer;
        }
        return {
          stream: true,
          messages: loggedStream(answer.messages, (err) =>
            logRpc(log, ctx.path, callStatus(ctx, err), started, err),
          ),
        };
      },
      (err: unknown) => {
        logRpc(log, ctx.path, callStatus(ctx, err), started, err);
        throw err;
      },
    );
  };
}

/** The stream, calling `ended` once when it completes, fails, or is stopped by its consumer. */
function loggedStream(
  messages: AsyncIterable<AnyResponse>,
  ended: (err?: unknown) => void,
): AsyncIterable<AnyResponse> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<AnyResponse> {
      const it = messages[Symbol.asyncIterator]();
      let done = false;
      const end = (err?: unknown) => {
        if (done) return;
        done = true;
        ended(err);
      };
      return {
        async next() {
          try {
            const result = await it.next();
            if (result.done) end();
            return result;
          } catch (err) {
            end(err);
            throw err;
          }
        },
        async return() {
          end();
          return (await it.return?.()) ?? { done: true, value: undefined };
        },
      };
    },
  };
}

/** Longest text taken from an error (which may quote a caller) into a log line. */
export const MAX_LOGGED_TEXT = 512;

/** One `rpc` line (`started` a `performance.now()`); at error level with the cause (its texts truncated) when the status is a server fault. */
export function logRpc(
  log: Logger,
  method: string,
  s: GrpcStatus,
  started: number,
  cause?: unknown,
): void {
  const fields = {
    method: truncate(method),
    status: status[s.code],
    durationMs: Math.round((performance.now() - started) * 1000) / 1000,
  };
  if (s.fault) log.error({ ...fields, err: loggedError(cause) }, "rpc failed");
  else log.info(fields, "rpc");
}

/**
 * An error as logged: the error itself when its texts are short; otherwise a copy (same prototype,
 * so the logged `type` stays) whose message, stack and cause's texts are cut to a bounded length.
 */
function loggedError(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) return typeof err === "string" ? truncate(err) : err;
  const long =
    err.message.length > MAX_LOGGED_TEXT || (err.stack?.length ?? 0) > 4 * MAX_LOGGED_TEXT;
  const cause = depth === 0 ? loggedError(err.cause, 1) : undefined;
  if (!long && cause === err.cause) return err;
  const copy = Object.assign(Object.create(Object.getPrototypeOf(err) as object) as Error, err);
  Object.defineProperty(copy, "message", { value: truncate(err.message), enumerable: false });
  if (err.stack !== undefined)
    Object.defineProperty(copy, "stack", {
      value: truncate(err.stack, 4 * MAX_LOGGED_TEXT),
      enumerable: false,
    });
  Object.defineProperty(copy, "cause", { value: cause, enumerable: false });
  return copy;
}

function truncate(text: string, max = MAX_LOGGED_TEXT): string {
  return text.length > max ? `${text.slice(0, max)}…[${text.length - max} more]` : text;
}
