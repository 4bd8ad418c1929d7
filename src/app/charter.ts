import { Server, ServerCredentials } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { pruneExpiredGrants } from "../authority/index.js";
import { isLoopback, parseListen, ConfigError, type CharterConfig } from "../config/config.js";
import { HEALTH_FILE, createHealth } from "../server/health.js";
import { loggingInterceptor } from "../server/logging.js";
import { requestLimits, serverOptions } from "./limits.js";
import { listenCapped } from "./listener.js";
import { addReflection } from "../server/reflection.js";
import { CONTRACT_FILES, charterServices } from "../server/services.js";
import { createAppContext, type AppContext } from "./context.js";

/** A running Charter server. */
export interface RunningCharter {
  /** The port actually bound (useful with port 0). */
  readonly port: number;
  readonly address: string;
  /** The application context the server answers from (tests use it to act as an operator would). */
  readonly context: AppContext;
  /** Client connections open now (at most `maxConnections`). */
  connections(): number;
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

/**
 * Starts Charter: checks the listen address, loads catalog and policy, opens the store and the
 * key ring, then serves the Charter services, health and reflection. Fails fast with a clear
 * message on any bad configuration.
 */
export async function startCharter(config: CharterConfig, options: StartOptions): Promise<RunningCharter> {
  const log = options.log;
  const listen = parseListen(config.listen);
  if (!listen) throw new ConfigError(`listen must be host:port, got "${config.listen}"`);
  if (!isLoopback(listen.host)) {
    throw new ConfigError(
      `refusing to listen on ${config.listen}: Charter has no caller authentication yet, so it serves only on loopback (127.0.0.1, ::1 or localhost)`,
    );
  }
  const ctx = await createAppContext(config, options.now ? { now: options.now } : {});
  const shutdown = new AbortController();
  const server = new Server(serverOptions(config));
  try {
    // Aborted at the start of stop(): health turns NOT_SERVING, every call's signal aborts, streams end.
    const health = createHealth(["", ...CONTRACT_FILES.flatMap((f) => f.services.map((s) => s.typeName))], { shutdown: shutdown.signal });
    for (const binding of [
      ...charterServices(ctx, {
        interceptors: [loggingInterceptor(log)],
        shutdown: shutdown.signal,
        log,
        limits: requestLimits(config),
        maxResponseBytes: config.maxMessageBytes,
      }),
      health.binding,
    ]) {
      server.addService(binding.definition, binding.implementation);
    }
    addReflection(server, [...CONTRACT_FILES, HEALTH_FILE]);

    const host = listen.host.includes(":") ? `[${listen.host}]` : listen.host;
    // Charter owns the listening socket (to cap connections) and hands each connection to grpc-js.
    const listener = await listenCapped(server.createConnectionInjector(ServerCredentials.createInsecure()), listen.host, listen.port, config.maxConnections);
    const port = listener.port;
    const address = `${host}:${port}`;
    // Retention: expired grants are pruned periodically; a failure is logged and tried again next time.
    const pruning = setInterval(() => {
      pruneExpiredGrants(ctx, config.grantRetentionSeconds).then(
        (pruned) => {
          if (pruned > 0) log.info({ pruned }, "expired grants pruned");
        },
        (err: unknown) => log.warn({ err: { message: (err as Error).message } }, "pruning expired grants failed"),
      );
    }, config.pruneIntervalSeconds * 1000);
    pruning.unref();
    const { catalog, policy } = ctx.policySet();
    log.info({ address, catalogVersion: catalog.version, policyVersion: policy.version }, "charter serving");

    return {
      port,
      address,
      context: ctx,
      connections: () => listener.connections(),
      async reload() {
        try {
          const reloaded = await ctx.reload();
          log.info({ catalogVersion: reloaded.catalog.version, policyVersion: reloaded.policy.version }, "catalog and policy reloaded");
        } catch (err) {
          log.error({ err: { message: (err as Error).message } }, "reload failed; keeping the previous catalog and policy");
          throw err;
        }
      },
      async stop(graceMs = 10_000) {
        clearInterval(pruning);
        shutdown.abort();
        const closed = listener.close();
        await shutdownServer(server, graceMs);
        await closed;
        await ctx.close();
        log.info("charter stopped");
      },
    };
  } catch (err) {
    shutdown.abort();
    server.forceShutdown();
    await ctx.close();
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
