/** What a cache reports of itself; counts are totals since it was made. */
export interface CacheStats {
  readonly entries: number;
  /** The bytes its entries are counted as, when it bounds bytes. */
  readonly bytes?: number;
  readonly hits?: number;
  readonly misses?: number;
}

const caches = new Map<string, () => CacheStats>();

/**
 * Registers a cache under `name` (`token`, `catalog`…) so the metrics report its size and hit
 * counts when scraped; answers the function that unregisters it. A second registration of a name
 * replaces the first. Costs nothing per call: the stats are read only when metrics are collected.
 */
export function registerCache(name: string, stats: () => CacheStats): () => void {
  caches.set(name, stats);
  return () => {
    if (caches.get(name) === stats) caches.delete(name);
  };
}

/** Every registered cache's stats, read now. */
export function readCaches(): [string, CacheStats][] {
  return [...caches].map(([name, stats]) => [name, stats()]);
}
