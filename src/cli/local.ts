import { join } from "node:path";
import { loadAuthority } from "../app/charter.js";
import type { CharterConfig } from "../config/config.js";
import type { Authority } from "../server/context.js";
import { openSqliteStore, type Store } from "../store/index.js";
import { createGrantVerifier, openKeyRing, type GrantVerifier, type KeyRing } from "../token/index.js";

/** Catalog, policy, store and keys of a data dir, for commands that work without a server. */
export interface LocalCharter {
  readonly authority: Authority;
  readonly store: Store;
  readonly ring: KeyRing;
  readonly verifier: GrantVerifier;
  close(): Promise<void>;
}

/** Opens the same store and key ring `charter serve` uses, so tokens are interchangeable. */
export async function openLocal(config: CharterConfig, now: number): Promise<LocalCharter> {
  const authority = await loadAuthority(config);
  const store = await openSqliteStore({ file: join(config.dataDir, "charter.db") });
  try {
    const ring = await openKeyRing(store, { now });
    const verifier = createGrantVerifier(ring, { issuer: config.issuer, audience: config.audience, maxEntries: 1 });
    return { authority, store, ring, verifier, close: () => store.close() };
  } catch (err) {
    await store.close();
    throw err;
  }
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
