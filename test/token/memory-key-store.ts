import { StoreError, type KeyStore, type StoredKey } from "../../src/store/port.js";

/**
 * An in-memory KeyStore for unit tests of the token layer: the port's semantics (oldest first,
 * CONFLICT on a duplicate kid, NOT_FOUND on retiring an unknown kid) and a count of reads.
 */
export class MemoryKeyStore implements KeyStore {
  readonly #keys: StoredKey[] = [];
  /** How many times listKeys was called. */
  lists = 0;
  /** When set, the next insertKey calls this first (to let a "concurrent" replica act). */
  beforeInsert: (() => Promise<void>) | undefined;
  /** When set, every call fails with UNAVAILABLE. */
  down = false;

  async listKeys(): Promise<StoredKey[]> {
    this.#check();
    this.lists += 1;
    return this.#keys.map((k) => ({ ...k }));
  }

  async insertKey(key: StoredKey): Promise<void> {
    this.#check();
    const hook = this.beforeInsert;
    this.beforeInsert = undefined;
    if (hook) await hook();
    if (this.#keys.some((k) => k.kid === key.kid)) throw new StoreError("CONFLICT", `key ${key.kid} exists`);
    this.#keys.push({ ...key });
  }

  async retireKey(kid: string, at: number): Promise<void> {
    this.#check();
    const i = this.#keys.findIndex((k) => k.kid === kid);
    const key = this.#keys[i];
    if (!key) throw new StoreError("NOT_FOUND", `no key ${kid}`);
    this.#keys[i] = { ...key, retiredAt: at };
  }

  /** Writes a key as is, bypassing every check (to plant a corrupt one). */
  plant(key: StoredKey): void {
    this.#keys.push(key);
  }

  #check(): void {
    if (this.down) throw new StoreError("UNAVAILABLE", "the memory store is down");
  }
}
