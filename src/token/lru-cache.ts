/** How an LRU cache weighs its entries, when it bounds bytes as well as entries. */
export interface LruCacheOptions<V> {
  /** The most bytes the entries may weigh together; an entry heavier than this is not kept. */
  readonly maxBytes?: number;
  /** The bytes an entry is counted as (default 0: only entries are bounded). */
  readonly sizeOf?: (value: V) => number;
}

/** A bounded map that forgets its least recently used entries when full: by count, and by bytes. */
export class LruCache<K, V> {
  readonly #max: number;
  readonly #maxBytes: number;
  readonly #sizeOf: (value: V) => number;
  readonly #entries = new Map<K, { readonly value: V; readonly bytes: number }>();
  #bytes = 0;

  /** `maxEntries` (or `maxBytes`) of 0 caches nothing. */
  constructor(maxEntries: number, options: LruCacheOptions<V> = {}) {
    if (!(Number.isSafeInteger(maxEntries) && maxEntries >= 0))
      throw new RangeError("maxEntries must be a non-negative integer");
    const maxBytes = options.maxBytes ?? Number.MAX_SAFE_INTEGER;
    if (!(Number.isSafeInteger(maxBytes) && maxBytes >= 0))
      throw new RangeError("maxBytes must be a non-negative integer");
    this.#max = maxEntries;
    this.#maxBytes = maxBytes;
    this.#sizeOf = options.sizeOf ?? (() => 0);
  }

  /** The most entries it keeps. */
  get max(): number {
    return this.#max;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The bytes the entries are counted as, together. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The value for `key`, which becomes the most recently used. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
    }
    return entry?.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const bytes = this.#sizeOf(value);
    if (this.#max === 0 || bytes > this.#maxBytes) return;
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
    while (this.#entries.size > this.#max || this.#bytes > this.#maxBytes) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.delete(oldest.value);
    }
  }

  delete(key: K): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}
