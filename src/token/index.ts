export * from "./errors.js";
export * from "./grant-token.js";
export * from "./key-resolver.js";
export * from "./key-ring.js";
export * from "./receipt.js";
export type { Jwks, PublicJwk } from "./signing-key.js";
export * from "./verifier.js";
export { MAX_TOKEN_LENGTH } from "./verify-jws.js";
export * from "./checkpoint.js";
