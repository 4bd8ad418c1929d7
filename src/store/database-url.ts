/** The scheme of a store URL (`postgres:`, `sqlite:`, `file:`…), lower-cased; undefined for no URL. */
export function storeUrlScheme(url: string): string | undefined {
  return SCHEME.exec(url)?.[1]?.toLowerCase();
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;

/**
 * Whether a store URL names a database other machines reach (PostgreSQL, shared by replicas)
 * rather than a file of this machine. The one place outside the adapters that reads a store
 * URL's kind: configuration asks it (a shared store holds signing keys only sealed).
 */
export function isSharedStoreUrl(url: string): boolean {
  const scheme = storeUrlScheme(url);
  return scheme === "postgres" || scheme === "postgresql";
}
