import { status } from "@grpc/grpc-js";
import { isAuthorityError, isLoadError, isStoreError, type AuthorityErrorCode } from "../authority/index.js";
import { isDecodeError } from "../interop/decode-error.js";

/** The gRPC status codes Charter answers with. */
export const RPC_CODES = [
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

/** A caller's mistake or a service failure with a message that is safe to send to the caller. */
export class RpcError extends Error {
  override readonly name = "RpcError";
  readonly code: RpcCode;

  constructor(code: RpcCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export function isRpcError(err: unknown): err is RpcError {
  return err instanceof RpcError;
}

/** INVALID_ARGUMENT naming the offending field. */
export function invalidField(field: string, problem: string): RpcError {
  return new RpcError("INVALID_ARGUMENT", `${field}: ${problem}`);
}

/** The status each application-layer refusal is answered with. */
const AUTHORITY_STATUS: Readonly<Record<AuthorityErrorCode, status>> = {
  INVALID_REQUEST: status.INVALID_ARGUMENT,
  UNAUTHENTICATED: status.UNAUTHENTICATED,
  FAILED_PRECONDITION: status.FAILED_PRECONDITION,
  NOT_FOUND: status.NOT_FOUND,
};

/** What the caller is told, and whether the cause should be logged as a server fault. */
export interface GrpcStatus {
  readonly code: status;
  readonly details: string;
  readonly fault: boolean;
}

/**
 * The one place an error becomes a gRPC status. Store outages are UNAVAILABLE; anything
 * unexpected is INTERNAL with a generic message — the cause goes to the log, never to the caller.
 */
export function toGrpcStatus(err: unknown): GrpcStatus {
  if (isRpcError(err)) return { code: status[err.code], details: err.message, fault: err.code === "INTERNAL" };
  if (isAuthorityError(err)) return { code: AUTHORITY_STATUS[err.code], details: err.message, fault: false };
  if (isDecodeError(err)) return { code: status.INVALID_ARGUMENT, details: err.message, fault: false };
  if (isStoreError(err)) {
    switch (err.code) {
      case "UNAVAILABLE":
        return { code: status.UNAVAILABLE, details: "the store is unavailable; nothing was decided", fault: true };
      case "NOT_FOUND":
        return { code: status.NOT_FOUND, details: err.message, fault: false };
      case "CONFLICT":
        return { code: status.ABORTED, details: err.message, fault: false };
      case "CORRUPT":
        return { code: status.INTERNAL, details: "internal error", fault: true };
    }
  }
  if (isLoadError(err)) return { code: status.FAILED_PRECONDITION, details: err.message, fault: false };
  return { code: status.INTERNAL, details: "internal error", fault: true };
}
