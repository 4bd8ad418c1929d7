import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { status, type Deadline, type Metadata } from "@grpc/grpc-js";
import { RpcError, isRpcError, toGrpcStatus, type GrpcStatus } from "./rpc-error.js";

/** Who is calling, once authentication (an interceptor) has established it. */
export interface Caller {
  readonly principal: string;
  readonly roles: readonly string[];
  /** Protected mode's local operator (see `Principal.protectedMode`). */
  readonly protectedMode?: true;
}

/** What the server knows of a verified client certificate. */
export interface ClientCertificate {
  /** The subject's common name: the principal the certificate is mapped to. */
  readonly subjectCommonName: string;
  /** SHA-256 fingerprint, as Node formats it (`AB:CD:…`). */
  readonly fingerprint256: string;
}

/** What a handler and each interceptor know about the call besides its request. */
export interface CallContext {
  readonly service: DescService;
  readonly method: DescMethod;
  /** `/package.Service/Method`. */
  readonly path: string;
  readonly metadata: Metadata;
  /** Undefined until an authentication interceptor passes a context with the caller to `next`. */
  readonly caller: Caller | undefined;
  /** The client certificate the TLS layer verified (mutual TLS); undefined on plaintext or without one. */
  readonly clientCertificate: ClientCertificate | undefined;
  /** When the client stops waiting; undefined without a deadline. */
  readonly deadline: Date | undefined;
  /**
   * Aborts when the client cancels, when the deadline passes, or when the server shuts down. Its
   * `reason` is the RpcError the call ends with: CANCELLED, DEADLINE_EXCEEDED, or UNAVAILABLE
   * "server shutting down".
   */
  readonly signal: AbortSignal;
}

/** The grpc-js call a context is made for. */
export interface SurfaceCall {
  readonly metadata: Metadata;
  getDeadline(): Deadline;
  on(event: "cancelled", listener: () => void): unknown;
  getAuthContext?(): { readonly sslPeerCertificate?: { readonly subject?: { readonly CN?: string | string[] }; readonly fingerprint256?: string } };
}

/**
 * A client's cancellation this close to the deadline (or later) counts as the deadline passing:
 * a grpc-js client cancels the call itself when its deadline passes, and its clock started a
 * little earlier than the server's.
 */
const DEADLINE_SLACK_MS = 50;

/**
 * Opens a call's context. `close`, once the call has ended, releases its timer and listeners;
 * the signal of a call that ended is not aborted afterwards (grpc-js reports every closed stream
 * as cancelled).
 */
export function openCallContext(
  service: DescService,
  method: DescMethod,
  call: SurfaceCall,
  shutdown: AbortSignal | undefined,
): { readonly ctx: CallContext; readonly close: () => void } {
  const controller = new AbortController();
  const raw = call.getDeadline();
  const at = raw instanceof Date ? raw.getTime() : raw;
  const deadline = Number.isFinite(at) ? new Date(at) : undefined;
  let ended = false;
  const abort = (reason: RpcError) => {
    if (!ended && !controller.signal.aborted) controller.abort(reason);
  };
  const expired = () => new RpcError("DEADLINE_EXCEEDED", "deadline exceeded");
  // The client's own deadline timer cancels the call too: tell them apart by the clock.
  const late = () => deadline !== undefined && deadline.getTime() - DEADLINE_SLACK_MS <= Date.now();
  // grpc-js reports every closed stream as cancelled, answered ones too: those cost nothing here.
  call.on("cancelled", () => {
    if (!ended && !controller.signal.aborted) abort(late() ? expired() : new RpcError("CANCELLED", "cancelled by the client"));
  });
  // A call that arrives past its deadline is aborted at once, before any work starts.
  if (deadline !== undefined && deadline.getTime() <= Date.now()) abort(expired());
  const timer = deadline && !controller.signal.aborted ? setTimeout(() => abort(expired()), Math.max(0, deadline.getTime() - Date.now())) : undefined;
  const onShutdown = () => abort(new RpcError("UNAVAILABLE", "server shutting down"));
  if (shutdown?.aborted) onShutdown();
  const stopWatching = shutdown && !shutdown.aborted ? whenShutDown(shutdown, onShutdown) : undefined;
  const path = `/${service.typeName}/${method.name}`;
  return {
    ctx: { service, method, path, metadata: call.metadata, caller: undefined, clientCertificate: clientCertificateOf(call), deadline, signal: controller.signal },
    close() {
      ended = true;
      clearTimeout(timer);
      stopWatching?.();
    },
  };
}

/** The open calls' shutdown handlers, per shutdown signal: one listener on the signal, not one per call in flight. */
const openCalls = new WeakMap<AbortSignal, Set<() => void>>();

/** Runs `onShutdown` when `shutdown` aborts, unless the returned function was called first. */
function whenShutDown(shutdown: AbortSignal, onShutdown: () => void): () => void {
  let calls = openCalls.get(shutdown);
  if (calls === undefined) {
    const handlers = new Set<() => void>();
    shutdown.addEventListener("abort", () => [...handlers].forEach((handler) => handler()), { once: true });
    openCalls.set(shutdown, handlers);
    calls = handlers;
  }
  const registered = calls;
  registered.add(onShutdown);
  return () => registered.delete(onShutdown);
}

/** The peer certificate of a TLS call, when the client presented one (grpc-js verified it against the client CA). */
function clientCertificateOf(call: SurfaceCall): ClientCertificate | undefined {
  const cert = call.getAuthContext?.().sslPeerCertificate;
  const cn = cert?.subject?.CN;
  const name = Array.isArray(cn) ? cn[0] : cn;
  if (cert === undefined || name === undefined || name === "") return undefined;
  return { subjectCommonName: name, fingerprint256: cert.fingerprint256 ?? "" };
}

const OK: GrpcStatus = { code: status.OK, details: "OK", fault: false };

/** Whether the client gave up on the call (cancelled it, or its deadline passed). */
export function clientGone(ctx: CallContext): boolean {
  if (pastDeadline(ctx)) return true;
  const reason: unknown = ctx.signal.reason;
  return ctx.signal.aborted && isRpcError(reason) && (reason.code === "CANCELLED" || reason.code === "DEADLINE_EXCEEDED");
}

/**
 * The status the client got for a call that ended with `err` (or without error): CANCELLED or
 * DEADLINE_EXCEEDED once it gave up, whatever the handler did afterwards; otherwise `toGrpcStatus`.
 */
export function callStatus(ctx: CallContext, err?: unknown): GrpcStatus {
  // Work that blocked the event loop past the deadline ends before the deadline timer can fire.
  if (pastDeadline(ctx) && !ctx.signal.aborted) return toGrpcStatus(new RpcError("DEADLINE_EXCEEDED", "deadline exceeded"));
  if (clientGone(ctx)) return toGrpcStatus(ctx.signal.reason);
  return err === undefined ? OK : toGrpcStatus(err);
}

/** The authenticated caller's principal as the application layer records it (none before authentication). */
export function callerOf(ctx: CallContext): { readonly caller?: string } {
  return ctx.caller === undefined ? {} : { caller: ctx.caller.principal };
}

/** Whether the call's deadline has passed by the clock, whether or not its timer has fired yet. */
function pastDeadline(ctx: CallContext): boolean {
  return ctx.deadline !== undefined && ctx.deadline.getTime() <= Date.now();
}

/**
 * A signal that aborts only when the client has gone (cancelled, or past its deadline), not when
 * the server begins a graceful stop: work for a caller that still waits is finished during the
 * drain, work for one that has gone stops.
 */
export function callerGoneSignal(ctx: CallContext): AbortSignal {
  const controller = new AbortController();
  const check = () => {
    if (clientGone(ctx)) controller.abort(ctx.signal.reason);
  };
  if (ctx.signal.aborted) check();
  else ctx.signal.addEventListener("abort", check, { once: true });
  return controller.signal;
}
