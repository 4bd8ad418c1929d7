import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { CallContext } from "./call-context.js";

/** A decoded request of any method. */
export type AnyRequest = MessageShape<DescMessage>;

/** A response message of any method, as handlers return it. */
export type AnyResponse = MessageInitShape<DescMessage>;

/** What a call answers: one message (unary) or a stream of them (server streaming). */
export type CallOutput =
  | { readonly stream: false; readonly message: AnyResponse }
  | { readonly stream: true; readonly messages: AsyncIterable<AnyResponse> };

/** One step of the call pipeline: the handler, or the handler wrapped by interceptors. */
export type CallHandler = (request: AnyRequest, ctx: CallContext) => Promise<CallOutput>;

/**
 * Wraps the rest of the pipeline (connect-es style: `next => next'`), for unary and streaming calls
 * alike. An interceptor may pass a new context to `next` (authentication sets `caller`), throw to
 * end the call, or wrap the response stream; a wrapped stream must forward `return()`.
 */
export type Interceptor = (next: CallHandler) => CallHandler;

/** The handler wrapped by the interceptors; the first interceptor is the outermost. */
export function applyInterceptors(
  handler: CallHandler,
  interceptors: readonly Interceptor[],
): CallHandler {
  return interceptors.reduceRight<CallHandler>((next, interceptor) => interceptor(next), handler);
}

/** `step(request, ctx)`, a synchronous throw included, as one promise: a pipeline step can be a plain function. */
export function runStep(
  step: CallHandler,
  request: AnyRequest,
  ctx: CallContext,
): Promise<CallOutput> {
  try {
    return step(request, ctx);
  } catch (err) {
    // The thrown value passes on unchanged, as an async function would reject with it.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    return Promise.reject(err);
  }
}
