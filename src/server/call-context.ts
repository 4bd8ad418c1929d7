import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { status, type Deadline, type Metadata } from "@grpc/grpc-js";
import { RpcError, isRpcError, toGrpcStatus, type GrpcStatus } from "./rpc-error.js";
import { uriSubjectAltNames } from "./subject-alt-names.js";

/** Who is calling, once authentication (an interceptor) has established it. */
export interface Caller {
  readonly principal: string;
  readonly roles: readonly string[];
  /** Protected mode's local operator (see `Principal.protectedMode`). */
  readonly protectedMode?: true;
}

/** What the server knows of a verified client certificate. */
export interface ClientCertificate {
  /** The subject's common name: the principal the certificate is mapped to; "" when it has none. */
  readonly subjectCommonName: string;
  /** SHA-256 fingerprint, as Node formats it (`AB:CD:…`). */
  readonly fingerprint256: string;
  /** Its URI subject alternative names (an X.509-SVID's SPIFFE ID); undefined when they cannot be read. */
  readonly uris: readonly string[] | undefined;
  /** It can sign certificates (OpenSSL's `X509_check_ca`, as Node reports it): a CA, not a leaf. */
  readonly ca: boolean;
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
  /** The connection the call came on (`address:port`, grpc-js's `getPeer()`); undefined when not known. */
  readonly peer?: string | undefined;
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
  getPeer?(): string;
  getAuthContext?(): {
    readonly sslPeerCertificate?: {
      readonly subject?: { readonly CN?: string | string[] };
      readonly fingerprint256?: string;
      readonly subjectaltname?: string;
      readonly ca?: boolean;
    };
  };
}

/**
 * A client's cancellation this close to the deadline (or later) counts as the deadline passing:
 * a grpc-js client cancels the call itself when its deadline passes, and its clock started a
 * little earlier than the server's.
 */
const DEADLINE_SLACK_MS = 50;

/**
 * What one call has come to, shared by every context made for it (`withCaller`). The signals
 * are made when first read: most unary calls never read `ctx.signal`, and an AbortController
 * costs microseconds. Whatever happened before a signal was made is applied when it is made.
 */
class CallState {
  ended = false;
  /** Why the call was aborted (the first cause wins); undefined while it runs. */
  reason: RpcError | undefined;
  #signal: AbortController | undefined;
  #timer: NodeJS.Timeout | undefined;
  #certificate: ClientCertificate | undefined | null = null;

  constructor(
    readonly call: SurfaceCall,
    readonly deadline: Date | undefined,
  ) {}

  abort(reason: RpcError): void {
    if (this.ended || this.reason !== undefined) return;
    this.reason = reason;
    this.#signal?.abort(reason);
  }

  get signal(): AbortSignal {
    if (this.#signal === undefined) {
      this.#signal = new AbortController();
      if (this.reason !== undefined) this.#signal.abort(this.reason);
      else this.#watchDeadline();
    }
    return this.#signal.signal;
  }

  /**
   * Throws why the caller has gone (CANCELLED, or DEADLINE_EXCEEDED once the deadline has passed
   * by the clock), and nothing when the server is stopping. Asked, not listened to: no signal and
   * no deadline timer are made for it.
   */
  throwIfAborted(): void {
    if (
      this.reason === undefined &&
      !this.ended &&
      this.deadline !== undefined &&
      this.deadline.getTime() <= Date.now()
    )
      this.abort(expired());
    if (isClientGoneReason(this.reason)) throw this.reason;
  }

  get clientCertificate(): ClientCertificate | undefined {
    if (this.#certificate === null) this.#certificate = clientCertificateOf(this.call);
    return this.#certificate;
  }

  /**
   * Once a signal exists that the deadline would abort: aborts now if it has passed, else arms its
   * timer (without a signal nothing needs the timer; the clock tells `callStatus`).
   */
  #watchDeadline(): void {
    const deadline = this.deadline;
    if (deadline === undefined || this.#timer !== undefined || this.ended) return;
    const left = deadline.getTime() - Date.now();
    if (left <= 0) this.abort(expired());
    else this.#timer = setTimeout(() => this.abort(expired()), left);
  }

  close(): void {
    this.ended = true;
    clearTimeout(this.#timer);
  }
}

const STATE = Symbol("call state");

/** A context's signal, certificate and peer: read from the call's state, made when first read. */
const LIVE_ACCESSORS = {
  signal: {
    enumerable: true,
    get(this: LiveContext): AbortSignal {
      return this[STATE].signal;
    },
  },
  clientCertificate: {
    enumerable: true,
    get(this: LiveContext): ClientCertificate | undefined {
      return this[STATE].clientCertificate;
    },
  },
  peer: {
    enumerable: true,
    get(this: LiveContext): string | undefined {
      const peer = this[STATE].call.getPeer?.();
      return peer === undefined || peer === "unknown" ? undefined : peer;
    },
  },
} as const;

/**
 * A context as `openCallContext` makes it. `signal` and `clientCertificate` are own enumerable
 * accessors (shared descriptors, no closure per call), so a spread copy (`{ ...ctx }`) still
 * has them, as values.
 */
class LiveContext implements CallContext {
  declare readonly signal: AbortSignal;
  declare readonly clientCertificate: ClientCertificate | undefined;
  declare readonly peer: string | undefined;
  readonly metadata: Metadata;
  readonly deadline: Date | undefined;
  readonly [STATE]: CallState;

  constructor(
    readonly service: DescService,
    readonly method: DescMethod,
    readonly path: string,
    state: CallState,
    readonly caller: Caller | undefined,
  ) {
    this.metadata = state.call.metadata;
    this.deadline = state.deadline;
    this[STATE] = state;
    Object.defineProperty(this, "signal", LIVE_ACCESSORS.signal);
    Object.defineProperty(this, "clientCertificate", LIVE_ACCESSORS.clientCertificate);
    Object.defineProperty(this, "peer", LIVE_ACCESSORS.peer);
  }
}

function stateOf(ctx: CallContext): CallState | undefined {
  return (ctx as Partial<LiveContext>)[STATE];
}

const expired = () => new RpcError("DEADLINE_EXCEEDED", "deadline exceeded");

function isClientGoneReason(reason: unknown): reason is RpcError {
  return isRpcError(reason) && (reason.code === "CANCELLED" || reason.code === "DEADLINE_EXCEEDED");
}

/**
 * Opens a call's context. `close`, once the call has ended, releases its timer and listeners;
 * the signal of a call that ended is not aborted afterwards (grpc-js reports every closed stream
 * as cancelled). `path` is the method's `/package.Service/Method`, made once per method.
 * `shutdown` is the server's watch (`watchShutdown`, made once per service binding), or a bare
 * signal, watched for this call alone.
 */
export function openCallContext(
  service: DescService,
  method: DescMethod,
  call: SurfaceCall,
  shutdown: ShutdownWatch | AbortSignal | undefined,
  path = `/${service.typeName}/${method.name}`,
): { readonly ctx: CallContext; readonly close: () => void } {
  const raw = call.getDeadline();
  const at = raw instanceof Date ? raw.getTime() : raw;
  const state = new CallState(call, Number.isFinite(at) ? new Date(at) : undefined);
  // The client's own deadline timer cancels the call too: tell them apart by the clock.
  // grpc-js reports every closed stream as cancelled, answered ones too: those cost nothing here.
  call.on("cancelled", () => {
    if (state.ended || state.reason !== undefined) return;
    const deadline = state.deadline;
    const late = deadline !== undefined && deadline.getTime() - DEADLINE_SLACK_MS <= Date.now();
    state.abort(late ? expired() : new RpcError("CANCELLED", "cancelled by the client"));
  });
  // A call that arrives past its deadline is aborted at once, before any work starts.
  if (state.deadline !== undefined && state.deadline.getTime() <= Date.now())
    state.abort(expired());
  const onShutdown = () => state.abort(new RpcError("UNAVAILABLE", "server shutting down"));
  const watch = shutdown instanceof AbortSignal ? watchShutdown(shutdown) : shutdown;
  if (watch?.signal.aborted) onShutdown();
  const stopWatching = watch && !watch.signal.aborted ? watch.watch(onShutdown) : undefined;
  return {
    ctx: new LiveContext(service, method, path, state, undefined),
    close() {
      state.close();
      stopWatching?.();
    },
  };
}

/** The same call's context with `caller` set (what authentication passes on); the signal stays the call's. */
export function withCaller(ctx: CallContext, caller: Caller): CallContext {
  const state = stateOf(ctx);
  return state === undefined
    ? { ...ctx, caller }
    : new LiveContext(ctx.service, ctx.method, ctx.path, state, caller);
}

/** A server's shutdown signal with the open calls' handlers: one listener on the signal, not one per call in flight. */
export interface ShutdownWatch {
  readonly signal: AbortSignal;
  /** Runs `onShutdown` when the signal aborts, unless the returned function was called first. */
  watch(onShutdown: () => void): () => void;
}

/** Watches `signal` for the calls of one service binding (the binding owns it, and it goes with it). */
export function watchShutdown(signal: AbortSignal): ShutdownWatch {
  const handlers = new Set<() => void>();
  signal.addEventListener("abort", () => [...handlers].forEach((handler) => handler()), {
    once: true,
  });
  return {
    signal,
    watch(onShutdown) {
      handlers.add(onShutdown);
      return () => handlers.delete(onShutdown);
    },
  };
}

/**
 * The peer certificate of a TLS call, when the client presented one (grpc-js verified it against
 * the client CA) with a subject CN or a URI SAN to name it by.
 */
function clientCertificateOf(call: SurfaceCall): ClientCertificate | undefined {
  const cert = call.getAuthContext?.().sslPeerCertificate;
  if (cert === undefined) return undefined;
  const cn = cert.subject?.CN;
  const name = (Array.isArray(cn) ? cn[0] : cn) ?? "";
  const uris = uriSubjectAltNames(cert.subjectaltname);
  if (name === "" && uris?.length === 0) return undefined;
  return {
    subjectCommonName: name,
    fingerprint256: cert.fingerprint256 ?? "",
    uris,
    ca: cert.ca === true,
  };
}

const OK: GrpcStatus = { code: status.OK, details: "OK", fault: false };

/** Why the call was aborted, if it was: read from its state without making its signal. */
function abortReason(ctx: CallContext): unknown {
  const state = stateOf(ctx);
  if (state !== undefined) return state.reason;
  return ctx.signal.aborted ? ctx.signal.reason : undefined;
}

/** Whether the client gave up on the call (cancelled it, or its deadline passed). */
export function clientGone(ctx: CallContext): boolean {
  return pastDeadline(ctx) || isClientGoneReason(abortReason(ctx));
}

/**
 * The status the client got for a call that ended with `err` (or without error): CANCELLED or
 * DEADLINE_EXCEEDED once it gave up, whatever the handler did afterwards; otherwise `toGrpcStatus`.
 */
export function callStatus(ctx: CallContext, err?: unknown): GrpcStatus {
  const reason = abortReason(ctx);
  // Work that blocked the event loop past the deadline ends before the deadline timer can fire.
  if (pastDeadline(ctx) && reason === undefined)
    return toGrpcStatus(new RpcError("DEADLINE_EXCEEDED", "deadline exceeded"));
  if (pastDeadline(ctx) || isClientGoneReason(reason)) return toGrpcStatus(reason);
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
 * Whether the client has gone (cancelled, or past its deadline), asked as an AbortSignal's
 * `throwIfAborted` is, which is all the application layer asks of it: it throws the reason once
 * the client has gone, and not when the server begins a graceful stop — work for a caller that
 * still waits is finished during the drain, work for one that has gone stops. A live context
 * answers from its call's state (no AbortController, no timer).
 */
export function callerGone(ctx: CallContext): Pick<AbortSignal, "throwIfAborted"> {
  const state = stateOf(ctx);
  if (state !== undefined) return state;
  return {
    throwIfAborted() {
      if (clientGone(ctx)) throw ctx.signal.aborted ? ctx.signal.reason : expired();
    },
  };
}
