/**
 * node:crypto's one-shot sha256 (`src/store/sha256.ts`, the one definition: the store hashes the
 * audit chain with it, and the store may not import this layer). The application layer hands it
 * to the core wherever a digest is taken on a request's path.
 */
export { nativeSha256Hex } from "../store/sha256.js";
