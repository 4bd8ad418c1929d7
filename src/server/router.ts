import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import {
  Metadata,
  status,
  type Deadline,
  type handleServerStreamingCall,
  type handleUnaryCall,
  type ServerErrorResponse,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import type { Logger } from "pino";
import { RpcError, toGrpcStatus } from "./rpc-error.js";

/** What a handler knows about the call besides its request. */
export interface CallContext {
  /** `/package.Service/Method`. */
  readonly path: string;
  readonly metadata: Metadata;
  /** Aborted when the client cancels or the deadline passes. */
  readonly signal: AbortSignal;
}

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
  [K in keyof S["method"]]: S["method"][K] extends { methodKind: "unary"; input: infer I extends DescMessage; output: infer O extends DescMessage }
    ? UnaryHandler<I, O>
    : S["method"][K] extends { methodKind: "server_streaming"; input: infer I extends DescMessage; output: infer O extends DescMessage }
      ? ServerStreamingHandler<I, O>
      : never;
};

/** One service with the handlers implemented so far; the others answer UNIMPLEMENTED. */
export interface ServiceBinding {
  readonly definition: ServiceDefinition;
  readonly implementation: UntypedServiceImplementation;
}

/**
 * Derives the grpc-js service definition from a protobuf-es descriptor (no hand-written method
 * table) and wraps each handler: the request is decoded inside the handler so a malformed message
 * is INVALID_ARGUMENT, errors become statuses in one place, and each call is logged once.
 */
export function bindService<S extends GenService<GenServiceMethods>>(
  service: S,
  handlers: Partial<ServiceHandlers<S>>,
  log: Logger,
): ServiceBinding {
  const definition: Record<string, ServiceDefinition[string]> = {};
  const implementation: UntypedServiceImplementation = {};
  for (const method of service.methods) {
    const path = `/${service.typeName}/${method.name}`;
    definition[method.localName] = {
      path,
      requestStream: false,
      responseStream: method.methodKind === "server_streaming",
      // The raw bytes pass through: decoding happens in the handler, where a failure is the caller's.
      requestSerialize: (bytes: Uint8Array) => Buffer.from(bytes),
      requestDeserialize: (bytes: Buffer) => bytes,
      responseSerialize: (message: MessageInitShape<DescMessage>) => Buffer.from(toBinary(method.output, create(method.output, message))),
      responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
      originalName: method.localName,
    };
    const handler = (handlers as Record<string, unknown>)[method.localName] as
      | ((req: MessageShape<DescMessage>, ctx: CallContext) => unknown)
      | undefined;
    const decode = (bytes: Buffer) => {
      try {
        return fromBinary(method.input, bytes);
      } catch {
        throw new RpcError("INVALID_ARGUMENT", `malformed ${method.input.typeName} message`);
      }
    };
    const fail = (started: bigint, err: unknown): ServerErrorResponse => {
      const s = toGrpcStatus(err);
      logCall(log, path, s.code, started, s.fault ? err : undefined);
      return serviceError(s.code, s.details);
    };

    if (method.methodKind === "unary") {
      const unary: handleUnaryCall<Buffer, MessageInitShape<DescMessage>> = (call, callback) => {
        const started = process.hrtime.bigint();
        const ctx = contextOf(path, call);
        Promise.resolve()
          .then(() => {
            if (!handler) throw new RpcError("UNIMPLEMENTED", `${method.name} is not implemented yet`);
            return handler(decode(call.request), ctx) as Promise<MessageInitShape<DescMessage>>;
          })
          .then(
            (response) => {
              logCall(log, path, abandoned(call, ctx) ?? status.OK, started);
              callback(null, response);
            },
            (err: unknown) => {
              // The client gave up: what it got is CANCELLED or DEADLINE_EXCEEDED, not a server fault.
              const gone = abandoned(call, ctx);
              if (gone === undefined) callback(fail(started, err));
              else {
                logCall(log, path, gone, started);
                callback(serviceError(gone, "cancelled"));
              }
            },
          );
      };
      implementation[method.localName] = unary;
    } else if (method.methodKind === "server_streaming") {
      const streaming: handleServerStreamingCall<Buffer, MessageInitShape<DescMessage>> = (call) => {
        const started = process.hrtime.bigint();
        const ctx = contextOf(path, call);
        void (async () => {
          try {
            if (!handler) throw new RpcError("UNIMPLEMENTED", `${method.name} is not implemented yet`);
            for await (const message of handler(decode(call.request), ctx) as AsyncIterable<MessageInitShape<DescMessage>>) {
              if (ctx.signal.aborted) break;
              call.write(message);
            }
            logCall(log, path, abandoned(call, ctx) ?? status.OK, started);
            call.end();
          } catch (err) {
            const gone = abandoned(call, ctx);
            if (gone !== undefined) logCall(log, path, gone, started);
            // grpc-js turns an 'error' event on a server stream into the call's final status.
            else call.emit("error", fail(started, err));
          }
        })();
      };
      implementation[method.localName] = streaming;
    }
  }
  return { definition, implementation };
}

function contextOf(path: string, call: { metadata: Metadata; on(event: "cancelled", cb: () => void): unknown }): CallContext {
  const controller = new AbortController();
  call.on("cancelled", () => controller.abort());
  return { path, metadata: call.metadata, signal: controller.signal };
}

/** The error grpc-js sends as a call's final status. */
function serviceError(code: status, details: string): ServerErrorResponse {
  return Object.assign(new Error(details), { code, details, metadata: new Metadata() });
}

/** The status a client that gave up on the call got, or undefined while it still waits. */
function abandoned(call: { getDeadline(): Deadline }, ctx: CallContext): status | undefined {
  if (!ctx.signal.aborted) return undefined;
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(at) && at <= Date.now() ? status.DEADLINE_EXCEEDED : status.CANCELLED;
}

/** One structured line per call: method, status and duration; never a token or an argument value. */
function logCall(log: Logger, method: string, code: status, started: bigint, fault?: unknown): void {
  const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
  const fields = { method, status: status[code], durationMs: Math.round(durationMs * 1000) / 1000 };
  if (fault === undefined) log.info(fields, "rpc");
  else log.error({ ...fields, err: fault }, "rpc failed");
}
