import { hash } from "node:crypto";
import type { Hash } from "../core/digest.js";

/**
 * node:crypto's one-shot sha256: the same lower-case hex as the core's pure-JS `sha256Hex` for the
 * same text (UTF-8, lone surrogates as U+FFFD in both), several times faster. Every adapter appends
 * the audit chain with it; the application layer passes it to the core for call digests.
 */
export const nativeSha256Hex: Hash = (text) => hash("sha256", text, "hex");
