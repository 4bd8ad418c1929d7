import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import canonicalizeModule from "canonicalize";

// canonicalize ships CommonJS with an ES-style declaration; at run time the default import is the function.
const serialize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

/**
 * RFC 8785 (JCS) canonical JSON text of a value. Throws for values JSON cannot represent
 * (NaN, Infinity, undefined at the top level): callers pass parsed JSON.
 */
export function canonicalJson(value: unknown): string {
  const text = serialize(value);
  if (text === undefined) throw new TypeError("value has no JSON representation");
  return text;
}

/** Lower-case hex sha256 of a string's UTF-8 bytes. */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}

/**
 * The digest an approval is bound to: sha256 over the canonical JSON of
 * {grantId, actionId, arguments}. Approving one call never authorizes a different one.
 */
export function callDigest(grantId: string, actionId: string, args: unknown): string {
  return sha256Hex(canonicalJson({ grantId, actionId, arguments: args }));
}

/**
 * The digest a tool descriptor is pinned by: sha256 over the canonical JSON of {name,
 * description, inputSchema}. A gateway compares it with an upstream server's tool of the same
 * name, so a changed description or schema (a "rug pull") is noticed.
 */
export function descriptorDigest(tool: { readonly name: string; readonly description: string; readonly inputSchema: unknown }): string {
  return sha256Hex(canonicalJson({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }));
}

/**
 * The digest of the arguments alone: sha256 over their RFC 8785 canonical text. A receipt carries
 * it (`arguments_digest`) so a tool service can check that the arguments it got are the ones decided.
 */
export function argumentsDigest(args: unknown): string {
  return sha256Hex(canonicalJson(args));
}
