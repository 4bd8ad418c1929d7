import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { KeyStore, StoredKey } from "../store/port.js";
import { TokenError } from "./errors.js";

/** A 256-bit key-encryption key (KEK) and its public id (so a wrong KEK is named, not guessed at). */
export interface KeyEncryptionKey {
  readonly key: Buffer;
  /** The first 16 hex digits of SHA-256 over the key: identifies it without revealing it. */
  readonly id: string;
}

/** The text form a sealed private half is stored in (JSON, in place of the private JWK). */
interface Envelope {
  readonly sealed: "A256GCM";
  readonly kek: string;
  readonly iv: string;
  readonly ct: string;
  readonly tag: string;
}

/** A KEK from its text: 32 bytes as base64 (or base64url) or 64 hex digits. */
export function parseKek(text: string): KeyEncryptionKey {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, "hex") : Buffer.from(t, "base64");
  if (key.length !== 32)
    throw new TokenError(
      "KEY_SEALED",
      "the key-encryption key must be 32 bytes, as base64 or 64 hex digits (e.g. openssl rand -base64 32)",
    );
  return { key, id: createHash("sha256").update(key).digest("hex").slice(0, 16) };
}

/** Whether a stored private half is sealed (encrypted) rather than a JWK in clear. */
export function isSealed(privateJwk: string): boolean {
  return privateJwk.startsWith('{"sealed":');
}

/** AES-256-GCM over `text` with `aad` as the additional data, as the envelope's JSON text. */
export function sealText(text: string, aad: string, kek: KeyEncryptionKey): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", kek.key, iv);
  cipher.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
  const envelope: Envelope = {
    sealed: "A256GCM",
    kek: kek.id,
    iv: iv.toString("base64url"),
    ct: ct.toString("base64url"),
    tag: cipher.getAuthTag().toString("base64url"),
  };
  return JSON.stringify(envelope);
}

/** Why a sealed text did not open: not an envelope, no KEK, another KEK (its id), or tampered. */
export type UnsealProblem =
  | { readonly problem: "unreadable" | "no-kek" | "tampered" }
  | { readonly problem: "other-kek"; readonly kekId: string };

/** The text of a sealed envelope made with the same `aad`, or why it does not open. */
export function openSealedText(
  stored: string,
  aad: string,
  kek: KeyEncryptionKey | undefined,
): { readonly text: string } | UnsealProblem {
  let e: Partial<Envelope>;
  try {
    e = JSON.parse(stored) as Partial<Envelope>;
  } catch {
    return { problem: "unreadable" };
  }
  if (kek === undefined) return { problem: "no-kek" };
  if (e.kek !== kek.id) return { problem: "other-kek", kekId: String(e.kek) };
  try {
    const decipher = createDecipheriv("aes-256-gcm", kek.key, Buffer.from(e.iv ?? "", "base64url"));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(e.tag ?? "", "base64url"));
    const text = Buffer.concat([
      decipher.update(Buffer.from(e.ct ?? "", "base64url")),
      decipher.final(),
    ]).toString("utf8");
    return { text };
  } catch {
    return { problem: "tampered" };
  }
}

/** AES-256-GCM over the private JWK; the kid is the additional data, so a sealed half cannot move to another key's row. */
export function sealPrivateJwk(privateJwk: string, kid: string, kek: KeyEncryptionKey): string {
  return sealText(privateJwk, `charter-signing-key:${kid}`, kek);
}

/** The private JWK of a sealed half; a missing or wrong KEK, or a tampered envelope, is KEY_SEALED. */
export function openPrivateJwk(
  stored: string,
  kid: string,
  kek: KeyEncryptionKey | undefined,
): string {
  const opened = openSealedText(stored, `charter-signing-key:${kid}`, kek);
  if ("text" in opened) return opened.text;
  switch (opened.problem) {
    case "unreadable":
      throw new TokenError(
        "KEY_SEALED",
        `signing key ${kid}: its sealed private key is unreadable`,
      );
    case "no-kek":
      throw new TokenError(
        "KEY_SEALED",
        `signing key ${kid} is encrypted at rest: configure its key-encryption key (kekFile or CHARTER_KEK)`,
      );
    case "other-kek":
      throw new TokenError(
        "KEY_SEALED",
        `signing key ${kid} was sealed with key-encryption key ${opened.kekId}, not the configured ${kek?.id ?? ""}`,
      );
    case "tampered":
      throw new TokenError(
        "KEY_SEALED",
        `signing key ${kid} does not decrypt with the configured key-encryption key (tampered, or another key)`,
      );
  }
}

/**
 * A KeyStore that seals private halves as they are stored and opens them as they are read, so
 * the store (a file, a shared database) never holds a signing key in clear. Without a KEK,
 * keys are stored in clear (protected by the data dir's permissions) and a sealed key is refused.
 */
export function sealedKeyStore(store: KeyStore, kek: KeyEncryptionKey | undefined): KeyStore {
  const open = (key: StoredKey): StoredKey =>
    isSealed(key.privateJwk)
      ? { ...key, privateJwk: openPrivateJwk(key.privateJwk, key.kid, kek) }
      : key;
  const seal = (key: StoredKey): StoredKey =>
    kek === undefined ? key : { ...key, privateJwk: sealPrivateJwk(key.privateJwk, key.kid, kek) };
  return {
    async listKeys() {
      return (await store.listKeys()).map(open);
    },
    insertKey: (key) => store.insertKey(seal(key)),
    insertKeyUnlessActive: (key) => store.insertKeyUnlessActive(seal(key)),
    retireKey: (kid, at) => store.retireKey(kid, at),
    rewrapKey: (kid, expected, next) => store.rewrapKey(kid, expected, next),
  };
}

/** Seals every key the store holds in clear (keys made before a KEK was configured); answers their kids. */
export async function sealStoredKeys(store: KeyStore, kek: KeyEncryptionKey): Promise<string[]> {
  const sealed: string[] = [];
  for (const key of await store.listKeys()) {
    if (isSealed(key.privateJwk)) continue;
    await store.rewrapKey(key.kid, key.privateJwk, sealPrivateJwk(key.privateJwk, key.kid, kek));
    sealed.push(key.kid);
  }
  return sealed;
}
