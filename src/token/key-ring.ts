import type { CryptoKey } from "jose";
import { CompactSigner } from "./compact-signer.js";
import type { KeyStore, StoredKey } from "../store/port.js";
import { TokenError } from "./errors.js";
import type { KeyResolver } from "./key-resolver.js";
import {
  generateStoredKey,
  importPrivateKey,
  loadStoredKey,
  type Jwks,
  type LoadedKey,
} from "./signing-key.js";

/** The private key new tokens are signed with, and the kid their header names. */
export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  /**
   * The key as receipts are signed with it by `crypto.sign`, made once with the key; a ring that
   * lacks it has receipts make one per signature.
   */
  readonly compact?: CompactSigner;
}

/**
 * Charter's signing keys, persisted in a KeyStore so that tokens survive restarts. One key signs:
 * the oldest active one in the store's order, so that every replica reading the same store signs
 * with the same key. Every stored key, retired ones included, verifies.
 */
export interface KeyRing extends KeyResolver {
  /** The key new tokens are signed with. */
  signingKey(): SigningKey;
  /** The public keys that verify Charter's tokens, retired ones included; never a private member. */
  jwks(): Jwks;
  /**
   * Makes a new signing key and retires, at `now`, the active keys stored before it. Tokens they
   * signed keep verifying. Answers the kid now used for signing.
   */
  rotate(now: number): Promise<string>;
  /** Reads the store again, picking up keys that other replicas added or rotated in. */
  reload(): Promise<void>;
}

/** How to open a key ring. */
export interface KeyRingOptions {
  /** Unix seconds; the creation time of a key generated on first start. */
  readonly now: number;
  /**
   * Least seconds between store reloads triggered by a token naming an unknown kid (default 30),
   * so that a flood of forged kids costs at most one store read per interval.
   */
  readonly reloadIntervalSeconds?: number;
}

export const DEFAULT_RELOAD_INTERVAL_SECONDS = 30;

/**
 * Opens the key ring persisted in `store`. When the store holds no active key, one is generated
 * and stored unless another replica stored an active key meanwhile (`insertKeyUnlessActive`, one
 * atomic step), then the store is read again: replicas that start together all sign with the one
 * first key, whatever their clocks.
 */
export async function openKeyRing(store: KeyStore, options: KeyRingOptions): Promise<KeyRing> {
  const ring = new StoreKeyRing(
    store,
    options.reloadIntervalSeconds ?? DEFAULT_RELOAD_INTERVAL_SECONDS,
    options.now,
  );
  let stored = await store.listKeys();
  if (!stored.some(isActive)) {
    // Stored only if no replica stored an active key since we listed; either way we read the winner.
    await store.insertKeyUnlessActive(await generateStoredKey(options.now));
    stored = await store.listKeys();
  }
  await ring.apply(stored);
  return ring;
}

function isActive(key: StoredKey): boolean {
  return key.retiredAt === undefined;
}

class StoreKeyRing implements KeyRing {
  readonly #store: KeyStore;
  readonly #reloadInterval: number;
  #lastReloadAt: number;
  #keys = new Map<string, LoadedKey>();
  #signing: SigningKey | undefined;
  /** Store reads and rotations run one at a time, so that the ring never applies a stale list. */
  #queue: Promise<unknown> = Promise.resolve();
  #pendingReload: Promise<void> | undefined;

  constructor(store: KeyStore, reloadInterval: number, now: number) {
    this.#store = store;
    this.#reloadInterval = reloadInterval;
    this.#lastReloadAt = now;
  }

  signingKey(): SigningKey {
    if (!this.#signing) throw new TokenError("NO_SIGNING_KEY", "the key ring has no signing key");
    return this.#signing;
  }

  jwks(): Jwks {
    return { keys: [...this.#keys.values()].map((k) => k.jwk) };
  }

  async resolveKey(kid: string, now: number): Promise<CryptoKey | undefined> {
    const known = this.#keys.get(kid);
    if (known) return known.publicKey;
    if (now >= this.#lastReloadAt && now < this.#lastReloadAt + this.#reloadInterval)
      return undefined;
    this.#lastReloadAt = now;
    await this.reload();
    return this.#keys.get(kid)?.publicKey;
  }

  reload(): Promise<void> {
    this.#pendingReload ??= this.#exclusive(async () => {
      this.#pendingReload = undefined;
      await this.apply(await this.#store.listKeys());
    });
    return this.#pendingReload;
  }

  rotate(now: number): Promise<string> {
    return this.#exclusive(async () => {
      const fresh = await generateStoredKey(now);
      await this.#store.insertKey(fresh);
      for (const key of await this.#store.listKeys()) {
        if (key.kid === fresh.kid) break;
        if (isActive(key)) await this.#store.retireKey(key.kid, now);
      }
      await this.apply(await this.#store.listKeys());
      return this.signingKey().kid;
    });
  }

  /** Makes `stored` (oldest first) the ring's keys; the oldest active one signs. */
  async apply(stored: readonly StoredKey[]): Promise<void> {
    const keys = new Map<string, LoadedKey>();
    for (const key of stored) {
      const known = this.#keys.get(key.kid);
      keys.set(
        key.kid,
        known && known.stored.publicJwk === key.publicJwk
          ? { ...known, stored: key }
          : await loadStoredKey(key),
      );
    }
    const signer = stored.find(isActive);
    if (!signer) {
      if (this.#signing) {
        this.#keys = keys;
        return;
      }
      throw new TokenError("NO_SIGNING_KEY", "the key store holds no active signing key");
    }
    if (this.#signing?.kid !== signer.kid) {
      const privateKey = await importPrivateKey(signer);
      const compact = new CompactSigner(signer.kid, privateKey);
      this.#signing = { kid: signer.kid, privateKey, compact };
    }
    this.#keys = keys;
  }

  #exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
