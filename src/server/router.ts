import {
  create,
  fromBinary,
  type DescMessage,
  type DescMethod,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import {
  Metadata,
  type handleServerStreamingCall,
  type handleUnaryCall,
  type ServerErrorResponse,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import type { Logger } from "pino";
import { untilAborted } from "./abortable.js";
import { NO_LEDGER, type ConnectionLedger } from "./connection-ledger.js";
import {
  callStatus,
  clientGone,
  openCallContext,
  watchShutdown,
  type CallContext,
} from "./call-context.js";
import {
  applyInterceptors,
  runStep,
  type CallHandler,
  type CallOutput,
  type Interceptor,
} from "./interceptor.js";
import { encodeMessage } from "./encode.js";
import { configureExactUtf8 } from "./exact-utf8.js";
import { logRpc, loggingInterceptor } from "./logging.js";
import {
  checkRequestLimits,
  DEFAULT_REQUEST_LIMITS,
  precheckRequest,
  type RequestLimits,
} from "./request-limits.js";
import { RpcError, toGrpcStatus, type GrpcStatus } from "./rpc-error.js";
import { STATUS_DETAILS_KEY, statusDetailsBin } from "./status-details.js";

export type { Caller, CallContext, ClientCertificate } from "./call-context.js";
export type { CallHandler, CallOutput, Interceptor } from "./interceptor.js";

export type UnaryHandler<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  ctx: CallContext,
) => Promise<MessageInitShape<O>>;

export type ServerStreamingHandler<I extends DescMessage, O extends DescMessage> = (
  request: MessageShape<I>,
  ctx: CallContext,
) => AsyncIterable<MessageInitShape<O>>;

/** Handlers for a generated service, typed from its descriptor: one per method, by local name. */
export type ServiceHandlers<S extends GenService<GenServiceMethods>> = {
  [K in keyof S["method"]]: S["method"][K] extends {
    methodKind: "unary";
    input: infer I extends DescMessage;
    output: infer O extends DescMessage;
  }
    ? UnaryHandler<I, O>
    : S["method"][K] extends {
          methodKind: "server_streaming";
          input: infer I extends DescMessage;
          output: infer O extends DescMessage;
        }
      ? ServerStreamingHandler<I, O>
      : never;
};

/** One service with the handlers implemented so far; the others answer UNIMPLEMENTED. */
export interface ServiceBinding {
  readonly definition: ServiceDefinition;
  readonly implementation: UntypedServiceImplementation;
}

export interface BindOptions {
  /** Applied after decoding, to unary and streaming calls alike; the first is the outermost. */
  readonly interceptors?: readonly Interceptor[];
  /** Aborted when the server shuts down: every call's signal aborts, open streams end UNAVAILABLE. */
  readonly shutdown?: AbortSignal;
  /** Logs what never reaches the interceptors: requests that cannot be decoded or are over a limit. */
  readonly log?: Logger;
  /** Field lengths and list sizes every request must keep to (`DEFAULT_REQUEST_LIMITS` when absent). */
  readonly limits?: RequestLimits;
  /**
   * The largest unary response, in bytes (the server's max send length): a larger one fails
   * RESOURCE_EXHAUSTED inside the pipeline, so the log line reports what the client got.
   */
  readonly maxResponseBytes?: number;
  /**
   * Told of every unary response handed to a connection until its stream closes (the total of
   * unread responses is bounded by whoever owns the connections); none by default.
   */
  readonly ledger?: ConnectionLedger;
}

/**
 * Derives the grpc-js service definition from a protobuf-es descriptor (no hand-written method
 * table) and serves each method through one pipeline: decode (a malformed message is
 * INVALID_ARGUMENT), the interceptors, the handler; every error becomes a status in
 * `toGrpcStatus`, sent with its machine-readable details. A Logger alone as `options` means
 * `{ interceptors: [loggingInterceptor(log)], log }`.
 */
export function bindService<S extends GenService<GenServiceMethods>>(
  service: S,
  handlers: Partial<ServiceHandlers<S>>,
  options: BindOptions | Logger = {},
): ServiceBinding {
  configureExactUtf8();
  const {
    interceptors = [],
    shutdown,
    log,
    limits = DEFAULT_REQUEST_LIMITS,
    maxResponseBytes = Infinity,
    ledger = NO_LEDGER,
  } = isLogger(options) ? { interceptors: [loggingInterceptor(options)], log: options } : options;
  const definition: Record<string, ServiceDefinition[string]> = {};
  const implementation: UntypedServiceImplementation = {};
  // One listener on the shutdown signal for every call of this binding.
  const shutdownWatch = shutdown === undefined ? undefined : watchShutdown(shutdown);
  // Unary responses encoded (and measured) in the pipeline, so grpc-js sends those bytes as they are.
  const encoded = new WeakMap<object, Uint8Array>();
  for (const method of service.methods) {
    const path = `/${service.typeName}/${method.name}`;
    definition[method.localName] = {
      path,
      requestStream: false,
      responseStream: method.methodKind === "server_streaming",
      // The raw bytes pass through: decoding happens in the pipeline, where a failure is the caller's.
      requestSerialize: (bytes: Uint8Array) => Buffer.from(bytes),
      requestDeserialize: (bytes: Buffer) => bytes,
      // A view of the encoded bytes, not a copy: grpc-js copies them into the frame.
      responseSerialize: (message: MessageInitShape<DescMessage>) =>
        asBuffer(encodedBytes(encoded, method.output, message)),
      responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
      originalName: method.localName,
    };
    const handler = (handlers as Record<string, unknown>)[method.localName] as
      ((req: MessageShape<DescMessage>, ctx: CallContext) => unknown) | undefined;
    const pipeline = applyInterceptors(
      innermost(method, handler, encoded, maxResponseBytes),
      interceptors,
    );
    const refuse = (err: RpcError, ctx: CallContext) => {
      if (log) logRpc(log, ctx.path, toGrpcStatus(err), performance.now());
      return Promise.reject(err);
    };
    /**
     * Checks the limits, decodes and runs the pipeline. A message over a limit (list sizes counted
     * on the raw bytes, before decoding) or that does not decode never reaches the interceptors.
     */
    const run = (bytes: Buffer, ctx: CallContext) => {
      const early = precheckRequest(method.input, bytes, limits);
      if (early) return refuse(early, ctx);
      let request: MessageShape<DescMessage>;
      try {
        request = fromBinary(method.input, bytes);
      } catch {
        return refuse(
          new RpcError("INVALID_ARGUMENT", `malformed ${method.input.typeName} message`),
          ctx,
        );
      }
      const over = checkRequestLimits(method.input, request, limits);
      if (over) return refuse(over, ctx);
      return runStep(pipeline, request, ctx);
    };

    if (method.methodKind === "unary") {
      const unary: handleUnaryCall<Buffer, MessageInitShape<DescMessage>> = (call, callback) => {
        const { ctx, close } = openCallContext(service, method, call, shutdownWatch, path);
        // The context is closed before the answer leaves, so the stream's closing does not abort its signal.
        run(call.request, ctx)
          .then((out) => {
            if (out.stream) throw new RpcError("INTERNAL", `${method.name} answered a stream`);
            close();
            // Held on the ledger until the stream closes: read by the client, or the client gone.
            const bytes = encoded.get(out.message)?.length;
            const peer = ctx.peer;
            if (bytes !== undefined && peer !== undefined && !call.cancelled)
              call.once("cancelled", ledger.holdResponse(peer, bytes));
            callback(null, out.message);
          })
          .catch((err: unknown) => {
            const failed = serviceError(callStatus(ctx, err));
            close();
            callback(failed);
          });
      };
      implementation[method.localName] = unary;
    } else if (method.methodKind === "server_streaming") {
      const streaming: handleServerStreamingCall<Buffer, MessageInitShape<DescMessage>> = (
        call,
      ) => {
        const { ctx, close } = openCallContext(service, method, call, shutdownWatch, path);
        void (async () => {
          try {
            const out = await run(call.request, ctx);
            if (!out.stream)
              throw new RpcError("INTERNAL", `${method.name} answered a single message`);
            // Backpressure: a client that does not read holds at most the stream's write buffer.
            for await (const message of out.messages)
              if (!call.write(message)) await drained(call, ctx.signal);
            if (!clientGone(ctx)) call.end();
          } catch (err) {
            // grpc-js turns an 'error' event on a server stream into the call's final status.
            if (!clientGone(ctx)) call.emit("error", serviceError(callStatus(ctx, err)));
          } finally {
            close();
          }
        })();
      };
      implementation[method.localName] = streaming;
    }
  }
  return { definition, implementation };
}

/** The handler as the pipeline's last step; a stream ends as soon as the call's signal aborts. */
function innermost(
  method: DescMethod,
  handler: ((req: MessageShape<DescMessage>, ctx: CallContext) => unknown) | undefined,
  encoded: WeakMap<object, Uint8Array>,
  maxResponseBytes: number,
): CallHandler {
  if (!handler)
    return () =>
      Promise.reject(new RpcError("UNIMPLEMENTED", `${method.name} is not implemented yet`));
  if (method.methodKind === "server_streaming") {
    return async (req, ctx) => ({
      stream: true,
      messages: untilAborted(
        handler(req, ctx) as AsyncIterable<MessageInitShape<DescMessage>>,
        ctx.signal,
      ),
    });
  }
  const answered = (message: MessageInitShape<DescMessage>): CallOutput => {
    const bytes = encodedBytes(encoded, method.output, message);
    if (bytes.length > maxResponseBytes) {
      throw new RpcError(
        "RESOURCE_EXHAUSTED",
        `the response would be ${bytes.length} bytes, more than the ${maxResponseBytes} allowed (maxMessageBytes)`,
      );
    }
    encoded.set(message, bytes);
    return { stream: false, message };
  };
  const answer: CallHandler = (req, ctx) =>
    (handler(req, ctx) as Promise<MessageInitShape<DescMessage>>).then(answered);
  return (req, ctx) => runStep(answer, req, ctx);
}

/** A response's bytes: those it was encoded to before (a cached message answered again), else its encoding now. */
function encodedBytes(
  encoded: WeakMap<object, Uint8Array>,
  output: DescMessage,
  message: MessageInitShape<DescMessage>,
): Uint8Array {
  return encoded.get(message) ?? encodeMessage(output, create(output, message));
}

/** Resolves when `call` can take more writes, or the call ends (`signal` aborts) first. */
function drained(
  call: {
    once(event: "drain", listener: () => void): unknown;
    off(event: "drain", listener: () => void): unknown;
  },
  signal: AbortSignal,
): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      call.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    call.once("drain", done);
    signal.addEventListener("abort", done, { once: true });
  });
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The error grpc-js sends as a call's final status, with `grpc-status-details-bin` when it has details. */
function serviceError(s: GrpcStatus): ServerErrorResponse {
  const metadata = new Metadata();
  const bin = statusDetailsBin(s);
  if (bin) metadata.set(STATUS_DETAILS_KEY, bin);
  return Object.assign(new Error(s.details), { code: s.code, details: s.details, metadata });
}

function isLogger(options: BindOptions | Logger): options is Logger {
  return typeof (options as Partial<Logger>).info === "function";
}
