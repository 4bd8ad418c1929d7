import { randomUUID } from "node:crypto";
import type { AuthorityContext, PolicySet } from "../authority/index.js";
import type { CharterConfig } from "../config/config.js";
import { loadCatalogFile, loadPolicyFile } from "../load/documents.js";
import { openStore, type Store } from "../store/index.js";
import { createGrantVerifier, openKeyRing } from "../token/index.js";

/** An application context with its lifecycle: the pair can be reloaded, and the store closed. */
export interface AppContext extends AuthorityContext {
  /** Reads catalog and policy again; a bad pair rejects and the one in force stays. */
  reload(): Promise<PolicySet>;
  /** Closes the store; a second close is harmless. */
  close(): Promise<void>;
}

/** What tests, benchmarks and the CLI may set instead of the defaults. */
export interface AppContextOptions {
  /** Unix seconds; tests pass a frozen clock. Default: the system clock. */
  readonly now?: () => number;
  /** Verified tokens to remember; default `config.tokenCacheSize` (the CLI, a one-shot process, passes 1). */
  readonly tokenCacheSize?: number;
}

/** Loads the pair: the policy is checked against the catalog it will be used with. */
export async function loadPolicySet(config: Pick<CharterConfig, "catalog" | "policy"> & Partial<Pick<CharterConfig, "schemaCacheSize">>): Promise<PolicySet> {
  const catalog = await loadCatalogFile(config.catalog, config.schemaCacheSize === undefined ? {} : { schemasPerGeneration: config.schemaCacheSize });
  const policy = await loadPolicyFile(config.policy, catalog);
  return { catalog, policy };
}

/**
 * The one factory of the application context (atproto's `AppContext.fromConfig`): the server,
 * the CLI, benchmarks and tests get their catalog and policy, store, key ring, verifier, clock
 * and ids from here. Fails with a clear error on a bad catalog, policy or store.
 */
export async function createAppContext(config: CharterConfig, options: AppContextOptions = {}): Promise<AppContext> {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  let policySet = await loadPolicySet(config);
  const store: Store = await openStore({ dataDir: config.dataDir, now });
  try {
    const ring = await openKeyRing(store, { now: now() });
    const verifier = createGrantVerifier(ring, {
      issuer: config.issuer,
      audience: config.audience,
      maxEntries: options.tokenCacheSize ?? config.tokenCacheSize,
      maxBytes: config.tokenCacheBytes,
    });
    return {
      policySet: () => policySet,
      store,
      ring,
      verifier,
      tokens: { issuer: config.issuer, audience: config.audience, receiptTtlSeconds: config.receiptTtlSeconds },
      maxBatch: config.maxBatch,
      limits: { arguments: { maxBytes: config.maxArgumentsBytes, maxDepth: config.maxArgumentsDepth }, maxTokenBytes: config.maxTokenBytes },
      now,
      newId: (prefix) => `${prefix}_${randomUUID()}`,
      async reload() {
        policySet = await loadPolicySet(config);
        return policySet;
      },
      close: () => store.close(),
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
