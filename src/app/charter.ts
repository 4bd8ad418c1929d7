import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { isLoopback, parseListen, ConfigError, type CharterConfig } from "../config/config.js";
import { loadCatalogFile, loadPolicyFile } from "../load/documents.js";
import type { Authority, ServerContext } from "../server/context.js";
import { HEALTH_FILE, createHealth } from "../server/health.js";
import { loggingInterceptor } from "../server/logging.js";
import { addReflection } from "../server/reflection.js";
import { CONTRACT_FILES, charterServices } from "../server/services.js";
import { openSqliteStore } from "../store/index.js";
import { createGrantVerifier, openKeyRing } from "../token/index.js";

/** A running Charter server. */
export interface RunningCharter {
  /** The port actually bound (useful with port 0). */
  readonly port: number;
  readonly address: string;
  /** Reloads catalog and policy; a bad reload keeps the old pair and rejects with the reason. */
  reload(): Promise<void>;
  /** Stops accepting calls, lets in-flight calls finish (up to `graceMs`), then closes the store. */
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  readonly log: Logger;
  /** Unix seconds; tests pass a frozen clock. */
  readonly now?: () => number;
}

/** Loads the authority pair: the policy is checked against the catalog it will be used with. */
export async function loadAuthority(config: Pick<CharterConfig, "catalog" | "policy">): Promise<Authority> {
  const catalog = await loadCatalogFile(config.catalog);
  const policy = await loadPolicyFile(config.policy, catalog);
  return { catalog, policy };
}

/**
 * Starts Charter: checks the listen address, loads catalog and policy, opens the store and the
 * key ring, then serves the Charter services, health and reflection. Fails fast with a clear
 * message on any bad configuration.
 */
export async function startCharter(config: CharterConfig, options: StartOptions): Promise<RunningCharter> {
  const log = options.log;
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const listen = parseListen(config.listen);
  if (!listen) throw new ConfigError(`listen must be host:port, got "${config.listen}"`);
  if (!isLoopback(listen.host)) {
    throw new ConfigError(
      `refusing to listen on ${config.listen}: Charter has no caller authentication yet, so it serves only on loopback (127.0.0.1, ::1 or localhost)`,
    );
  }
  let authority = await loadAuthority(config);
  const store = await openSqliteStore({ file: join(config.dataDir, "charter.db") });
  const shutdown = new AbortController();
  const server = new Server({
    "grpc.max_receive_message_length": config.maxMessageBytes,
    "grpc.max_send_message_length": config.maxMessageBytes,
  });
  try {
    const ring = await openKeyRing(store, { now: now() });
    const verifier = createGrantVerifier(ring, { issuer: config.issuer, audience: config.audience, maxEntries: config.tokenCacheSize });
    const ctx: ServerContext = {
      authority: () => authority,
      store,
      ring,
      verifier,
      tokens: { issuer: config.issuer, audience: config.audience, receiptTtlSeconds: config.receiptTtlSeconds },
      now,
      newId: (prefix) => `${prefix}_${randomUUID()}`,
      log,
      maxBatch: config.maxBatch,
    };
    // Aborted at the start of stop(): health turns NOT_SERVING, every call's signal aborts, streams end.
    const health = createHealth(["", ...CONTRACT_FILES.flatMap((f) => f.services.map((s) => s.typeName))], { shutdown: shutdown.signal });
    for (const binding of [...charterServices(ctx, { interceptors: [loggingInterceptor(log)], shutdown: shutdown.signal, log }), health.binding]) {
      server.addService(binding.definition, binding.implementation);
    }
    addReflection(server, [...CONTRACT_FILES, HEALTH_FILE]);

    const host = listen.host.includes(":") ? `[${listen.host}]` : listen.host;
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host}:${listen.port}`, ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
    );
    const address = `${host}:${port}`;
    log.info({ address, catalogVersion: authority.catalog.version, policyVersion: authority.policy.version }, "charter serving");

    return {
      port,
      address,
      async reload() {
        try {
          authority = await loadAuthority(config);
          log.info({ catalogVersion: authority.catalog.version, policyVersion: authority.policy.version }, "catalog and policy reloaded");
        } catch (err) {
          log.error({ err: { message: (err as Error).message } }, "reload failed; keeping the previous catalog and policy");
          throw err;
        }
      },
      async stop(graceMs = 10_000) {
        shutdown.abort();
        await shutdownServer(server, graceMs);
        await store.close();
        log.info("charter stopped");
      },
    };
  } catch (err) {
    shutdown.abort();
    server.forceShutdown();
    await store.close();
    throw err;
  }
}

/** Graceful shutdown: no new calls, in-flight calls finish; past the grace period, cancel them. */
function shutdownServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
