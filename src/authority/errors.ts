/**
 * Why the application layer refused a request. A deny verdict is not one of these (it is data);
 * these mean the request itself cannot be answered as asked:
 * - INVALID_REQUEST: a field is missing or malformed (`field` names it, as the contract spells it);
 * - UNAUTHENTICATED: the grant token presented does not verify, has expired or is revoked;
 * - FAILED_PRECONDITION: the policy cannot do what was asked (a profile that cannot be composed,
 *   a delegation that would widen);
 * - NOT_FOUND: the grant (or other record) named does not exist;
 * - PERMISSION_DENIED: the authenticated caller may not act on this record (another owner's approval).
 * - RESOURCE_EXHAUSTED: the request, or what it would produce (a grant token), is over a
 *   configured limit; nothing was recorded.
 */
import type { ComposeDenialCode } from "../core/compose.js";
import type { RefusalCode } from "../core/delegate.js";
import type { ReasonCode } from "../core/verdict.js";

/** Charter's machine-readable codes a refusal can carry: verdict reasons, delegation refusals, compose denials. */
export type AuthorityReason = ReasonCode | RefusalCode | ComposeDenialCode;

export const AUTHORITY_ERROR_CODES = [
  "INVALID_REQUEST",
  "UNAUTHENTICATED",
  "FAILED_PRECONDITION",
  "NOT_FOUND",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
] as const;

export type AuthorityErrorCode = (typeof AUTHORITY_ERROR_CODES)[number];

export interface AuthorityErrorOptions {
  /** Charter's machine-readable code for the refusal (`UNKNOWN_PROFILE`, `GRANT_REVOKED`, `DEPTH_EXCEEDED`…). */
  readonly reason?: AuthorityReason;
  /** The request field at fault, e.g. `items[2].call.call_id`. */
  readonly field?: string;
  /** What is wrong with `field`, without the field's name. */
  readonly problem?: string;
  readonly cause?: unknown;
}

/** The one error class of the application layer; its message is safe to show the caller. */
export class AuthorityError extends Error {
  override readonly name = "AuthorityError";
  readonly code: AuthorityErrorCode;
  readonly reason: AuthorityReason | undefined;
  readonly field: string | undefined;
  readonly problem: string | undefined;

  constructor(code: AuthorityErrorCode, message: string, options: AuthorityErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.reason = options.reason;
    this.field = options.field;
    this.problem = options.problem;
  }
}

export function isAuthorityError(err: unknown): err is AuthorityError {
  return err instanceof AuthorityError;
}

/** INVALID_REQUEST naming the field: the message reads `field: problem`. */
export function invalidRequest(
  field: string,
  problem: string,
  reason?: AuthorityReason,
): AuthorityError {
  return new AuthorityError(
    "INVALID_REQUEST",
    `${field}: ${problem}`,
    reason === undefined ? { field, problem } : { field, problem, reason },
  );
}
