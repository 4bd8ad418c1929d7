/** A bounded map that forgets its least recently used entry when full. */
export class LruCache<K, V> {
  readonly #max: number;
  readonly #entries = new Map<K, V>();

  /** `maxEntries` of 0 caches nothing. */
  constructor(maxEntries: number) {
    if (!(Number.isSafeInteger(maxEntries) && maxEntries >= 0)) throw new RangeError("maxEntries must be a non-negative integer");
    this.#max = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value for `key`, which becomes the most recently used. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    if (this.#max === 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }
}
