import { status } from "@grpc/grpc-js";
import {
  isAuthorityError,
  isLoadError,
  isStoreError,
  type AuthorityErrorCode,
  type AuthorityReason,
} from "../authority/index.js";
import { isDecodeError } from "../interop/decode-error.js";

/** The gRPC status codes Charter answers with. */
export const RPC_CODES = [
  "CANCELLED",
  "DEADLINE_EXCEEDED",
  "INVALID_ARGUMENT",
  "FAILED_PRECONDITION",
  "NOT_FOUND",
  "UNAUTHENTICATED",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "UNAVAILABLE",
  "UNIMPLEMENTED",
  "ABORTED",
  "INTERNAL",
] as const;

export type RpcCode = (typeof RPC_CODES)[number];

/** A Charter code a client can switch on: sent as `google.rpc.ErrorInfo.reason`. */
export type ErrorReason = AuthorityReason;

/** The domain of Charter's error reasons (`google.rpc.ErrorInfo.domain`). */
export const ERROR_DOMAIN = "charter";

/** One wrong request field (`google.rpc.BadRequest.FieldViolation`). */
export interface FieldViolation {
  /** The field's path in the request, e.g. `items[1].call.call_id`. */
  readonly field: string;
  readonly description: string;
}

/** The machine-readable parts of an error (`google.rpc.ErrorInfo`). */
export interface ErrorInfo {
  readonly reason: ErrorReason;
  readonly domain: string;
  /** Never a token or an argument value. */
  readonly metadata: Readonly<Record<string, string>>;
}

export interface RpcErrorOptions {
  readonly cause?: unknown;
  /** The Charter code behind the error, sent as ErrorInfo (domain {@link ERROR_DOMAIN}). */
  readonly reason?: ErrorReason;
  /** ErrorInfo metadata; only with a reason. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** The wrong fields, sent as BadRequest. */
  readonly fieldViolations?: readonly FieldViolation[];
}

/** A caller's mistake or a service failure with a message that is safe to send to the caller. */
export class RpcError extends Error {
  override readonly name = "RpcError";
  readonly code: RpcCode;
  readonly info: ErrorInfo | undefined;
  readonly fieldViolations: readonly FieldViolation[];

  constructor(code: RpcCode, message: string, options: RpcErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.info =
      options.reason === undefined
        ? undefined
        : { reason: options.reason, domain: ERROR_DOMAIN, metadata: { ...options.metadata } };
    this.fieldViolations = options.fieldViolations ?? [];
  }
}

export function isRpcError(err: unknown): err is RpcError {
  return err instanceof RpcError;
}

/** INVALID_ARGUMENT naming the offending field, in the message and as a BadRequest violation. */
export function invalidField(field: string, problem: string): RpcError {
  return new RpcError("INVALID_ARGUMENT", `${field}: ${problem}`, {
    fieldViolations: [{ field, description: problem }],
  });
}

/** The status each application-layer refusal is answered with. */
const AUTHORITY_STATUS: Readonly<Record<AuthorityErrorCode, status>> = {
  INVALID_REQUEST: status.INVALID_ARGUMENT,
  UNAUTHENTICATED: status.UNAUTHENTICATED,
  FAILED_PRECONDITION: status.FAILED_PRECONDITION,
  NOT_FOUND: status.NOT_FOUND,
  PERMISSION_DENIED: status.PERMISSION_DENIED,
  RESOURCE_EXHAUSTED: status.RESOURCE_EXHAUSTED,
};

/** What the caller is told, and whether the cause should be logged as a server fault. */
export interface GrpcStatus {
  readonly code: status;
  /** The status message (today's text). */
  readonly details: string;
  readonly fault: boolean;
  /** Sent as `google.rpc.ErrorInfo` in `grpc-status-details-bin`. */
  readonly info?: ErrorInfo;
  /** Sent as `google.rpc.BadRequest` in `grpc-status-details-bin`. */
  readonly fieldViolations?: readonly FieldViolation[];
}

/**
 * The one place an error becomes a gRPC status. Store outages are UNAVAILABLE; anything
 * unexpected is INTERNAL with a generic message — the cause goes to the log, never to the caller.
 */
export function toGrpcStatus(err: unknown): GrpcStatus {
  if (isRpcError(err)) {
    return {
      code: status[err.code],
      details: err.message,
      fault: err.code === "INTERNAL",
      ...(err.info ? { info: err.info } : {}),
      ...(err.fieldViolations.length > 0 ? { fieldViolations: err.fieldViolations } : {}),
    };
  }
  if (isAuthorityError(err)) {
    return {
      code: AUTHORITY_STATUS[err.code],
      details: err.message,
      fault: false,
      ...(err.reason === undefined
        ? {}
        : { info: { reason: err.reason, domain: ERROR_DOMAIN, metadata: {} } }),
      ...(err.field === undefined
        ? {}
        : { fieldViolations: [{ field: err.field, description: err.problem ?? err.message }] }),
    };
  }
  if (isDecodeError(err)) {
    return {
      code: status.INVALID_ARGUMENT,
      details: err.message,
      fault: false,
      fieldViolations: [{ field: err.field, description: err.problem }],
    };
  }
  if (isStoreError(err)) {
    switch (err.code) {
      case "UNAVAILABLE":
        return {
          code: status.UNAVAILABLE,
          details: "the store is unavailable; nothing was decided",
          fault: true,
        };
      case "NOT_FOUND":
        return { code: status.NOT_FOUND, details: err.message, fault: false };
      case "CONFLICT":
        return { code: status.ABORTED, details: err.message, fault: false };
      case "CORRUPT":
        return { code: status.INTERNAL, details: "internal error", fault: true };
    }
  }
  if (isLoadError(err))
    return { code: status.FAILED_PRECONDITION, details: err.message, fault: false };
  return { code: status.INTERNAL, details: "internal error", fault: true };
}
