import type { TaskGrant } from "../core/grant.js";
import type { ShadowGrant } from "../core/shadow-policy.js";
import type { Store } from "../store/port.js";
import type { CacheStats } from "../telemetry/caches.js";
import { LruCache } from "../token/lru-cache.js";
import type { CatalogAnswer } from "./catalog.js";
import type { AuthorityContext, PolicySet } from "./context.js";

/**
 * The bounds of the rendered-catalog cache of each catalog/policy pair (a reload starts a new,
 * empty one and the old one goes with the old pair): at most this many entries, and at most
 * `maxBytes` counted as `2 × token length + 6 × rendered JSON length + 1 KiB` per entry (the
 * verified grant the entry holds, about as large as its token; the view, the rendering and the
 * encoded response, each about as long as the rendered text).
 */
export const CATALOG_CACHE_BOUNDS = { maxEntries: 1024, maxBytes: 64 * 1024 * 1024 } as const;

/** The most ancestor grants kept parsed per store (a grant's stored JSON is a few KB). */
export const MAX_CACHED_ANCESTORS = 1000;

/** The most grants kept recomposed under the shadow policy, per catalog/policy pair. */
export const MAX_CACHED_SHADOW_GRANTS = 1024;

/** A rendered catalog, the verified grant it was rendered for, and the bytes it is counted as. */
export interface CachedCatalog {
  readonly grant: TaskGrant;
  readonly answer: CatalogAnswer;
  readonly bytes: number;
}

/**
 * What one application context caches for the application layer, made with the context
 * (`createAppContext`) and emptied by its `close`: two contexts in one process share none of it.
 * Each cache is reached by a field read or one WeakMap lookup, as before they moved here.
 */
export interface AuthorityCaches {
  /** The rendered catalogs of a catalog/policy pair, by dialect and grant id (one LRU per pair). */
  catalogs(policySet: PolicySet): LruCache<string, CachedCatalog>;
  /** The stored ancestor grants of `store`, parsed, by id (a stored grant never changes). */
  ancestors(store: Store): LruCache<string, TaskGrant>;
  /**
   * The grants presented under a pair with a shadow policy, recomposed under it
   * (`shadowGrantOf`), by grant id (one LRU per pair: a reload starts an empty one).
   */
  shadowGrants(policySet: PolicySet): LruCache<string, ShadowGrant>;
  /**
   * Grants whose allow a commit has refused (their budget, or an ancestor's, was spent): no
   * receipt is signed ahead for them. Keyed by the verified grant object, so an entry goes with
   * its token.
   */
  readonly refusedGrants: WeakSet<TaskGrant>;
  /** Empties every cache (the context's `close` calls it); the caches stay usable, empty. */
  dispose(): void;
}

/** A fresh, empty set of the application layer's caches. */
export function createAuthorityCaches(): AuthorityCaches {
  let catalogs = new WeakMap<PolicySet, LruCache<string, CachedCatalog>>();
  let ancestors = new WeakMap<Store, LruCache<string, TaskGrant>>();
  let refusedGrants = new WeakSet<TaskGrant>();
  let shadowGrants = new WeakMap<PolicySet, LruCache<string, ShadowGrant>>();
  return {
    catalogs(policySet) {
      let cache = catalogs.get(policySet);
      if (cache === undefined) {
        cache = new LruCache<string, CachedCatalog>(CATALOG_CACHE_BOUNDS.maxEntries, {
          maxBytes: CATALOG_CACHE_BOUNDS.maxBytes,
          sizeOf: (c) => c.bytes,
        });
        catalogs.set(policySet, cache);
      }
      return cache;
    },
    ancestors(store) {
      let cache = ancestors.get(store);
      if (cache === undefined) {
        cache = new LruCache<string, TaskGrant>(MAX_CACHED_ANCESTORS);
        ancestors.set(store, cache);
      }
      return cache;
    },
    shadowGrants(policySet) {
      let cache = shadowGrants.get(policySet);
      if (cache === undefined) {
        cache = new LruCache<string, ShadowGrant>(MAX_CACHED_SHADOW_GRANTS);
        shadowGrants.set(policySet, cache);
      }
      return cache;
    },
    get refusedGrants() {
      return refusedGrants;
    },
    dispose() {
      catalogs = new WeakMap();
      ancestors = new WeakMap();
      refusedGrants = new WeakSet();
      shadowGrants = new WeakMap();
    },
  };
}

/**
 * What the metrics report of a context's caches, read now: `token` (the verifier's: entries,
 * bytes, cache hits, signature verifications as misses), `schemas` (the compiled schemas of the
 * catalog in force; a reload brings a new compiler, with counts from 0), `catalog` (the rendered
 * catalogs of the pair in force), `ancestors` (the parsed ancestor grants of its store) and, with a
 * shadow policy, `shadow` (the grants recomposed under it).
 */
export function cacheStats(
  ctx: Pick<AuthorityContext, "caches" | "policySet" | "store" | "verifier">,
): [string, CacheStats][] {
  const token = ctx.verifier.stats();
  const policySet = ctx.policySet();
  const catalogs = ctx.caches.catalogs(policySet);
  return [
    [
      "token",
      {
        entries: token.size,
        bytes: token.bytes,
        hits: token.cacheHits,
        misses: token.signatureVerifications,
      },
    ],
    ["schemas", policySet.catalog.schemas.stats()],
    ["catalog", { entries: catalogs.size, bytes: catalogs.bytes }],
    ["ancestors", { entries: ctx.caches.ancestors(ctx.store).size }],
    // Only while a shadow policy is configured: a pair without one has no such cache to make.
    ...(policySet.shadow === undefined
      ? []
      : [["shadow", { entries: ctx.caches.shadowGrants(policySet).size }] as [string, CacheStats]]),
  ];
}
