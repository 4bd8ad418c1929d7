/**
 * Why the token layer could not do what it was asked. A token that fails verification is not an
 * error (verification answers `{ ok: false }`); these mean "could not sign" or "could not start":
 * - KEY_INVALID: a stored key is not a usable Ed25519 key pair, or its kid is not its thumbprint;
 * - NO_SIGNING_KEY: the key store holds no active key even after one was generated;
 * - INVALID_INPUT: the caller asked to sign something malformed (a grant of the wrong shape, a
 *   receipt claim that is not a string, a non-positive ttl);
 * - KEY_SEALED: a signing key is encrypted at rest and the key-encryption key is missing, wrong,
 *   or malformed (a configuration problem: start-up fails naming it).
 */
export type TokenErrorCode = "KEY_INVALID" | "NO_SIGNING_KEY" | "INVALID_INPUT" | "KEY_SEALED";

/** The one error class of the token layer. */
export class TokenError extends Error {
  override readonly name = "TokenError";
  readonly code: TokenErrorCode;

  constructor(code: TokenErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** True when `err` is a TokenError. */
export function isTokenError(err: unknown): err is TokenError {
  return err instanceof TokenError;
}
