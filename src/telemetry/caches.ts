/**
 * What a cache reports of itself; counts are totals since it was made. The caches themselves
 * belong to an application context (`cacheStats` in `src/authority` lists a context's), which
 * hands their stats to `createMetrics`: nothing here keeps them.
 */
export interface CacheStats {
  readonly entries: number;
  /** The bytes its entries are counted as, when it bounds bytes. */
  readonly bytes?: number;
  readonly hits?: number;
  readonly misses?: number;
}

/** Reads the stats of the caches the metrics report, by name (`token`, `catalog`…), when scraped. */
export type CacheStatsSource = () => Iterable<readonly [string, CacheStats]>;
