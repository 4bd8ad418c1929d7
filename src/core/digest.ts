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

/**
 * A sha256 of a string's UTF-8 bytes as lower-case hex. The core's own (`sha256Hex`) is pure
 * JavaScript, so tests and the offline CLI need nothing else; a shell passes a native one
 * (node:crypto, several times faster) that gives the same values.
 */
export type Hash = (text: string) => string;

/** Lower-case hex sha256 of a string's UTF-8 bytes (pure JavaScript). */
export const sha256Hex: Hash = (text) => bytesToHex(sha256(utf8ToBytes(text)));

/**
 * The digest an approval is bound to: sha256 over the canonical JSON of
 * {grantId, actionId, arguments}. Approving one call never authorizes a different one.
 */
export function callDigest(
  grantId: string,
  actionId: string,
  args: unknown,
  hash: Hash = sha256Hex,
): string {
  return callDigests(args, hash).call(grantId, actionId);
}

/**
 * The digest a tool descriptor is pinned by: sha256 over the canonical JSON of {name,
 * description, inputSchema}. A gateway compares it with an upstream server's tool of the same
 * name, so a changed description or schema (a "rug pull") is noticed.
 */
export function descriptorDigest(tool: {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: unknown;
}): string {
  return sha256Hex(
    canonicalJson({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    }),
  );
}

/**
 * The digest of the arguments alone: sha256 over their RFC 8785 canonical text. A receipt carries
 * it (`arguments_digest`) so a tool service can check that the arguments it got are the ones decided.
 */
export function argumentsDigest(args: unknown, hash: Hash = sha256Hex): string {
  return callDigests(args, hash).arguments();
}

/** The digests of one call's arguments, each computed on first use and remembered. */
export interface CallDigests {
  /** `callDigest(grantId, actionId, args)`; throws as it does for arguments JSON cannot represent. */
  call(grantId: string, actionId: string): string;
  /** `argumentsDigest(args)`; throws as it does. */
  arguments(): string;
  /** The arguments' RFC 8785 canonical text (what both digests hash); throws for a value without one. */
  canonical(): string;
}

/**
 * The digests of one call's arguments, sharing one canonical serialization of them: the call
 * digest's canonical text is assembled around it (RFC 8785 orders the members actionId,
 * arguments, grantId and writes strings as JSON.stringify does), so the arguments are
 * serialized once however many digests are taken. Values the fast path cannot place (undefined,
 * which canonical JSON omits, or anything without a JSON text) take the full serialization, so
 * every value gives exactly what `canonicalJson({grantId, actionId, arguments})` gives.
 */
export function callDigests(args: unknown, hash: Hash = sha256Hex): CallDigests {
  let argsText: string | undefined | null = null;
  let argsDigest: string | undefined;
  let last:
    { readonly grantId: string; readonly actionId: string; readonly digest: string } | undefined;
  // null: not serialized yet; undefined: no JSON text of its own (the whole object is serialized instead).
  const text = (): string | undefined =>
    argsText === null ? (argsText = serialize(args)) : argsText;
  const canonical = (): string => {
    const inner = text();
    if (inner === undefined) throw new TypeError("value has no JSON representation");
    return inner;
  };
  return {
    call(grantId, actionId) {
      if (last?.grantId === grantId && last.actionId === actionId) return last.digest;
      const inner =
        typeof grantId === "string" && typeof actionId === "string" ? text() : undefined;
      const whole =
        inner === undefined
          ? canonicalJson({ grantId, actionId, arguments: args })
          : `{"actionId":${JSON.stringify(actionId)},"arguments":${inner},"grantId":${JSON.stringify(grantId)}}`;
      last = { grantId, actionId, digest: hash(whole) };
      return last.digest;
    },
    arguments: () => (argsDigest ??= hash(canonical())),
    canonical,
  };
}
