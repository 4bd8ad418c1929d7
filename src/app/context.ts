import { readFileSync } from "node:fs";
import {
  createWithdrawalSweeper,
  type WithdrawalSweeper,
  createAuditCheckpointer,
  createAuthorityCaches,
  createNotifier,
  pollForChanges,
  WATCH_POLL_MS,
  type AuthorityContext,
  type Notifier,
  type PolicySet,
} from "../authority/index.js";
import { ConfigError, type CharterConfig } from "../config/config.js";
import { isStoreIdentityError, openStore, type Store } from "../store/index.js";
import {
  createGrantVerifier,
  decisionInputSealer,
  isTokenError,
  openKeyRing,
  parseKek,
  sealStoredKeys,
  sealedKeyStore,
  type KeyEncryptionKey,
} from "../token/index.js";
import { createAuditWitness, parseWitnessCommand, type AuditWitness } from "./audit-witness.js";
import { checkPrivateFile, preparePrivateDataDir } from "./private-files.js";
import { loadVersionedPolicySet, reloadPolicySet, type LoadedPolicySet } from "./policy-set.js";
import { timeOrderedUuid } from "./time-ordered-id.js";
import { inboxAddress, type InboxAddress } from "./inbox-address.js";

export { loadPolicySet } from "./policy-set.js";

/** An application context with its lifecycle: the pair can be reloaded, and the store closed. */
export interface AppContext extends AuthorityContext {
  /** Reads catalog and policy again; a bad pair rejects and the one in force stays. */
  reload(): Promise<PolicySet>;
  /** The witnesses outside the store that checkpoints also go to, when configured. */
  readonly auditWitness?: AuditWitness;
  /** Closes the store and empties the context's caches; a second close is harmless. */
  close(): Promise<void>;
  /** The approvals inbox's address, when one is configured (links are made from it). */
  readonly approvalLinks?: InboxAddress;
  /** Resolves once the withdrawal sweep of the last reload (or start) has ended (sticky-withdrawal.ts). */
  withdrawalsSwept(): Promise<void>;
}

/** The key-encryption key from `kekFile` (a file only its owner can read) or CHARTER_KEK; undefined when neither is set. */
function keyEncryptionKey(
  config: Pick<CharterConfig, "kek" | "kekFile">,
): KeyEncryptionKey | undefined {
  let text = config.kek;
  if (config.kekFile !== "") {
    checkPrivateFile(config.kekFile, "key-encryption key file");
    text = readFileSync(config.kekFile, "utf8");
  }
  if (text === "") return undefined;
  try {
    return parseKek(text);
  } catch (err) {
    throw new ConfigError(
      `${config.kekFile === "" ? "CHARTER_KEK" : config.kekFile}: ${(err as Error).message}`,
    );
  }
}

/** What tests, benchmarks and the CLI may set instead of the defaults. */
export interface AppContextOptions {
  /** Unix seconds; tests pass a frozen clock. Default: the system clock. */
  readonly now?: () => number;
  /** Verified tokens to remember; default `config.tokenCacheSize` (the CLI, a one-shot process, passes 1). */
  readonly tokenCacheSize?: number;
  /** The approval feed; a cluster worker passes one that also tells the other workers. Default: this process only. */
  readonly approvalFeed?: Notifier;
  /** Where the store's warnings go; the server passes its logger. Default: `process.emitWarning`. */
  readonly warn?: (message: string) => void;
  /** Where a failed audit witness delivery is reported; the server logs it at error. Default: `process.emitWarning`. */
  readonly error?: (message: string) => void;
  /** Whether a missing store may be created (default true; the server passes what `createStore` / `--init` say). */
  readonly createStore?: boolean;
}

/**
 * The one factory of the application context (atproto's `AppContext.fromConfig`): the server,
 * the CLI, benchmarks and tests get their catalog and policy, store, key ring, verifier, clock
 * and ids from here. Fails with a clear error on a bad catalog, policy, data dir or store. The
 * data dir must be the owner's alone; with a key-encryption key, signing keys are sealed at rest
 * (keys stored in clear before are sealed now).
 */
export async function createAppContext(
  config: CharterConfig,
  options: AppContextOptions = {},
): Promise<AppContext> {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  let loaded: LoadedPolicySet = await loadVersionedPolicySet(config);
  const kek = keyEncryptionKey(config);
  preparePrivateDataDir(config.dataDir);
  const auditWitness = createAuditWitness({
    file: config.auditWitnessFile,
    command: parseWitnessCommand(config.auditWitnessCommand),
    dataDir: config.dataDir,
    onError:
      options.error ??
      ((message) => process.emitWarning(message, { code: "CHARTER_AUDIT_WITNESS" })),
  });
  const store: Store = await openStore({
    dataDir: config.dataDir,
    ...(config.database === undefined ? {} : { url: config.database }),
    now,
    ...(options.warn === undefined ? {} : { warn: options.warn }),
    ...(options.createStore === undefined ? {} : { create: options.createStore }),
  }).catch((err: unknown) => {
    throw isStoreIdentityError(err) ? new ConfigError(err.message, { cause: err }) : err;
  });
  try {
    const keyStore = sealedKeyStore(store, kek);
    if (kek) await sealStoredKeys(store, kek);
    const ring = await openKeyRing(keyStore, { now: now() }).catch((err: unknown) => {
      throw isTokenError(err) && err.code === "KEY_SEALED"
        ? new ConfigError(err.message, { cause: err })
        : err;
    });
    const verifier = createGrantVerifier(ring, {
      issuer: config.issuer,
      audience: config.audience,
      maxEntries: options.tokenCacheSize ?? config.tokenCacheSize,
      maxBytes: config.tokenCacheBytes,
    });
    const tokens = {
      issuer: config.issuer,
      audience: config.audience,
      receiptTtlSeconds: config.receiptTtlSeconds,
    };
    const caches = createAuthorityCaches();
    // Watchers see other processes' approval events through one poll per context, not one per watcher.
    const approvalFeed = options.approvalFeed ?? createNotifier();
    const closing = new AbortController();
    pollForChanges(approvalFeed, () => store.lastApprovalSequence(), WATCH_POLL_MS, closing.signal);
    // The kill switch made sticky: grants a reload withdraws are recorded revoked in the background.
    const sweep: { sweeper?: WithdrawalSweeper } = {};
    const links = inboxAddress(config, store);
    const ctx: AppContext = {
      policySet: () => loaded.set,
      store,
      ring,
      verifier,
      tokens,
      maxBatch: config.maxBatch,
      approvalTtlSeconds: config.approvalTtlSeconds,
      approvalFeed,
      ...(links === undefined ? {} : { approvalLinks: links }),
      audit: createAuditCheckpointer(
        {
          store,
          ring,
          tokens,
          now,
          ...(auditWitness ? { witness: (cp) => auditWitness.witness(cp) } : {}),
        },
        config.auditCheckpointRecords,
      ),
      ...(auditWitness ? { auditWitness } : {}),
      decisionInputs: {
        sealer: decisionInputSealer(kek),
        retainSeconds: config.retainDecisionInputsDays * 24 * 3600,
      },
      limits: {
        arguments: { maxBytes: config.maxArgumentsBytes, maxDepth: config.maxArgumentsDepth },
        maxTokenBytes: config.maxTokenBytes,
      },
      caches,
      now,
      newId: (prefix) => `${prefix}_${timeOrderedUuid()}`,
      async reload() {
        await sweep.sweeper?.settle();
        const before = loaded.set.policy;
        loaded = await reloadPolicySet(config, loaded);
        await ring.reload();
        sweep.sweeper?.start(before, loaded.set.policy);
        return loaded.set;
      },
      withdrawalsSwept: async () => sweep.sweeper?.idle(),
      async close() {
        closing.abort();
        caches.dispose();
        await auditWitness?.close();
        await store.close();
      },
    };
    sweep.sweeper = createWithdrawalSweeper(ctx, {
      warn: options.warn ?? ((message) => process.emitWarning(message)),
      signal: closing.signal,
    });
    sweep.sweeper.start(undefined, loaded.set.policy);
    return ctx;
  } catch (err) {
    await auditWitness?.close();
    await store.close();
    throw err;
  }
}
