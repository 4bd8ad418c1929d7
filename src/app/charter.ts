import { Server, type ConnectionInjector } from "@grpc/grpc-js";
import type { Logger } from "pino";
import {
  createRefusalTally,
  hasApiKeys,
  pruneExpiredGrants,
  type Notifier,
  type RefusalTally,
} from "../authority/index.js";
import { ConfigError, type CharterConfig } from "../config/config.js";
import { decideAuthMode } from "./auth-mode.js";
import { authenticationInterceptor } from "../server/authentication.js";
import { HEALTH_FILE, createHealth } from "../server/health.js";
import { storeIntegrityInterceptor } from "../server/store-integrity.js";
import { loggingInterceptor } from "../server/logging.js";
import { guardedConnectionInjector, requestFramingInterceptor } from "../server/request-framing.js";
import { telemetryInterceptor } from "../server/telemetry.js";
import { requestLimits, serverOptions } from "./limits.js";
import { listenCapped, type CappedListener } from "./listener.js";
import {
  createConnectionPool,
  type ConnectionPool,
  type ConnectionStats,
} from "./connection-pool.js";
import { addReflection } from "../server/reflection.js";
import { CONTRACT_FILES, charterServices } from "../server/services.js";
import { createAppContext, type AppContext } from "./context.js";
import { planListen, type ListenPlan } from "./listen.js";
import { startProcessTelemetry, type ProcessTelemetry } from "./telemetry.js";
import { transportSecurity } from "./tls.js";

/** How often the server re-reads the signing keys, so a `charter keys rotate-signing` is picked up. */
export const KEY_RELOAD_INTERVAL_MS = 30_000;

/** A running Charter server. */
export interface RunningCharter {
  /** The port actually bound (useful with port 0). */
  readonly port: number;
  readonly address: string;
  /** The application context the server answers from (tests use it to act as an operator would). */
  readonly context: AppContext;
  /** Where `GET /metrics` is served, when `metricsListen` is set (a cluster worker has none: its primary serves them). */
  readonly metricsAddress?: string;
  /** Client connections open now (at most `maxConnections`). */
  connections(): number;
  /** Connections open, pre-auth among them, and unread response bytes they hold. */
  connectionStats(): ConnectionStats;
  /** Reloads catalog and policy; a bad reload keeps the old pair and rejects with the reason. */
  reload(): Promise<void>;
  /** Stops accepting calls, lets in-flight calls finish (up to `graceMs`), then closes the store. */
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  readonly log: Logger;
  /** Unix seconds; tests pass a frozen clock. */
  readonly now?: () => number;
  /** Set in a cluster worker (its slot): the primary, not the worker, announces the server stopped. */
  readonly worker?: number;
  /** The approval feed (a cluster worker's relays through the primary). */
  readonly approvalFeed?: Notifier;
}

/**
 * Starts Charter: resolves the listen address, reads the TLS settings, loads catalog and policy,
 * opens the data dir, the store and the key ring, decides the caller-authentication mode, then
 * serves the Charter services (behind authentication), health and reflection. Fails fast with a
 * clear message on any bad configuration.
 */
export async function startCharter(
  config: CharterConfig,
  options: StartOptions,
): Promise<RunningCharter> {
  const log = options.log;
  const plan = await planListen(config.listen);
  const security = transportSecurity(config);
  const ctx = await createAppContext(config, {
    ...(options.now ? { now: options.now } : {}),
    ...(options.approvalFeed ? { approvalFeed: options.approvalFeed } : {}),
    warn: (message) => log.warn({ event: "store.warning" }, message),
    error: (message) => log.error({ event: "audit.witness_failed" }, message),
    createStore: config.createStore === "if-missing",
  });
  let keyReload: NodeJS.Timeout | undefined;
  let refusals: RefusalTally | undefined;
  const shutdown = new AbortController();
  // Missing/extra request messages and a bad grpc-timeout are refused INVALID_ARGUMENT (request-framing.ts).
  const server = new Server({
    ...serverOptions(config),
    interceptors: [requestFramingInterceptor],
  });
  let telemetry: ProcessTelemetry | undefined;
  try {
    telemetry = await startProcessTelemetry(config, ctx, log, options.worker);
    const keys = await hasApiKeys(ctx);
    checkExposure(config.listen, plan, { keys, mutualTls: security.mutual });
    const protectedMode = await decideAuthMode(ctx, config, {
      loopbackOnly: plan.loopbackOnly,
      mutualTls: security.mutual,
      log,
    });
    if (!security.tls && !plan.loopbackOnly) {
      log.warn(
        { addresses: plan.addresses },
        "API keys travel in plaintext on a non-loopback address; configure tlsCert and tlsKey",
      );
    }
    // One pool over every listen address: the caps are per server process.
    const pool = createConnectionPool({
      maxConnections: config.maxConnections,
      maxPreAuthConnections: Math.min(config.maxPreAuthConnections, config.maxConnections),
      maxUnreadResponseBytes: config.maxUnreadResponseMib * 1024 * 1024,
    });
    // Refused unauthenticated calls: counted, one record per peer, RPC, reason and interval.
    refusals = createRefusalTally(ctx, {
      intervalMs: config.auditRefusalIntervalMs,
      onError: (err) =>
        log.warn(
          { err: { message: (err as Error).message } },
          "auditing refused calls failed; retrying later",
        ),
    });
    const authentication = authenticationInterceptor(ctx, {
      certificateRoles: security.certificateRoles,
      spiffeRoles: security.spiffeRoles,
      ...(protectedMode === undefined ? {} : { protectedMode }),
      ledger: pool.ledger,
      refusals,
    });
    // Aborted at the start of stop(): health turns NOT_SERVING, every call's signal aborts, streams end.
    const health = createHealth(
      ["", ...CONTRACT_FILES.flatMap((f) => f.services.map((s) => s.typeName))],
      { shutdown: shutdown.signal },
    );
    for (const binding of [
      ...charterServices(
        ctx,
        {
          // The telemetry interceptor only when metrics or traces are configured: off, it costs nothing.
          interceptors: [
            loggingInterceptor(log),
            ...(telemetry.enabled ? [telemetryInterceptor()] : []),
            storeIntegrityInterceptor(ctx, log),
            authentication,
          ],
          shutdown: shutdown.signal,
          log,
          limits: requestLimits(config),
          maxResponseBytes: config.maxMessageBytes,
          ledger: pool.ledger,
        },
        {
          perCaller: config.maxWatchStreamsPerCaller,
          total: config.maxWatchStreams,
        },
      ),
      health.binding,
    ]) {
      server.addService(binding.definition, binding.implementation);
    }
    addReflection(server, [...CONTRACT_FILES, HEALTH_FILE]);

    // Charter owns the listening sockets (to cap connections) and hands each connection to grpc-js.
    const { port, address, listeners } = await bindAll(
      guardedConnectionInjector(server, security.credentials),
      plan,
      pool,
      log,
    );
    // Retention: expired grants are pruned periodically; a failure is logged and tried again next time.
    const pruning = setInterval(() => {
      pruneExpiredGrants(ctx, config.grantRetentionSeconds).then(
        (pruned) => {
          if (pruned > 0) log.info({ pruned }, "expired grants pruned");
        },
        (err: unknown) =>
          log.warn({ err: { message: (err as Error).message } }, "pruning expired grants failed"),
      );
    }, config.pruneIntervalSeconds * 1000);
    pruning.unref();
    const housekeeping = startHousekeeping(ctx, config, log);
    const { catalog, policy } = ctx.policySet();
    log.info(
      {
        address,
        addresses: plan.addresses,
        tls: security.tls,
        mutualTls: security.mutual,
        catalogVersion: catalog.version,
        policyVersion: policy.version,
      },
      "charter serving",
    );
    keyReload = setInterval(
      () =>
        void ctx.ring
          .reload()
          .catch((err: unknown) => log.error({ err }, "signing key reload failed")),
      KEY_RELOAD_INTERVAL_MS,
    );
    keyReload.unref();

    const { metricsAddress } = telemetry;
    return {
      port,
      address,
      ...(metricsAddress === undefined ? {} : { metricsAddress }),
      context: ctx,
      connections: () => pool.stats().open,
      connectionStats: () => pool.stats(),
      async reload() {
        try {
          const reloaded = await ctx.reload();
          log.info(
            { catalogVersion: reloaded.catalog.version, policyVersion: reloaded.policy.version },
            "catalog and policy reloaded",
          );
        } catch (err) {
          log.error(
            { err: { message: (err as Error).message } },
            "reload failed; keeping the previous catalog and policy",
          );
          throw err;
        }
      },
      async stop(graceMs = 10_000) {
        clearInterval(keyReload);
        clearInterval(pruning);
        shutdown.abort();
        const closed = Promise.all(listeners.map((l) => l.close()));
        await shutdownServer(server, graceMs);
        await closed;
        // Every refusal answered is counted: its last counts go on the log before the final checkpoint.
        await refusals
          ?.close()
          .catch((err: unknown) =>
            log.error(
              { err: { message: (err as Error).message } },
              "auditing refused calls failed",
            ),
          );
        await housekeeping.stop();
        await telemetry?.stop();
        await ctx.close();
        log.info(options.worker === undefined ? "charter stopped" : "worker stopped");
      },
    };
  } catch (err) {
    clearInterval(keyReload);
    await refusals?.close().catch(() => undefined);
    shutdown.abort();
    server.forceShutdown();
    await telemetry?.stop();
    await ctx.close();
    throw err;
  }
}

/**
 * Protected mode: without an API key and without mutual TLS nobody can be told apart, so the
 * server serves loopback only; asked for any other address (judged by the addresses it resolves
 * to, not the name) it refuses to start.
 */
function checkExposure(
  listen: string,
  plan: ListenPlan,
  auth: { readonly keys: boolean; readonly mutualTls: boolean },
): void {
  if (plan.loopbackOnly || auth.keys || auth.mutualTls) return;
  const resolved = plan.addresses.join(", ") === plan.host ? "" : ` (${plan.addresses.join(", ")})`;
  throw new ConfigError(
    `refusing to listen on ${listen}${resolved}: no API key and no client certificate authority is configured, so Charter serves only on loopback (127.0.0.1, ::1); create an API key (charter keys create) or configure mutual TLS (tlsClientCa) to listen elsewhere`,
  );
}

/**
 * Listens on every planned address (literally, so nothing is resolved again), all admitted by
 * one connection pool, and hands the connections to grpc-js through one injector (so TLS, when
 * configured, is the injector's). With port 0 the first listener picks the port and the others
 * reuse it; a second address that fails (IPv6 off, say) is logged and skipped.
 */
async function bindAll(
  injector: ConnectionInjector,
  plan: ListenPlan,
  pool: ConnectionPool,
  log: Logger,
): Promise<{ port: number; address: string; listeners: CappedListener[] }> {
  const bracket = (a: string) => (a.includes(":") ? `[${a}]` : a);
  const [first, ...rest] = plan.addresses as [string, ...string[]];
  const listeners = [await listenCapped(injector, first, plan.port, pool)];
  const port = (listeners[0] as CappedListener).port;
  for (const address of rest) {
    await listenCapped(injector, address, port, pool).then(
      (l) => listeners.push(l),
      (err: unknown) =>
        log.warn(
          { address, err: { message: (err as Error).message } },
          "could not bind one of the listen addresses",
        ),
    );
  }
  return { port, address: `${bracket(first)}:${port}`, listeners };
}

/** How often pending approvals past their time are recorded expired (so watchers see it). */
export const EXPIRY_SWEEP_MS = 1000;

/**
 * The server's timers: approvals whose time ran out are recorded `expired` every second (and
 * watchers woken), and the audit chain head is checkpointed every `auditCheckpointSeconds` when
 * records were added. `stop` ends both and signs a last checkpoint.
 */
function startHousekeeping(
  ctx: AppContext,
  config: CharterConfig,
  log: Logger,
): { stop(): Promise<void> } {
  const failed = (what: string) => (err: unknown) =>
    log.warn({ err: { message: (err as Error).message } }, `${what} failed; retrying later`);
  const sweep = setInterval(() => {
    ctx.store
      .expireApprovals(ctx.now())
      .then((n) => {
        if (n > 0) ctx.approvalFeed.notify();
      })
      .catch(failed("expiring approvals"));
  }, EXPIRY_SWEEP_MS);
  const checkpoint = setInterval(() => {
    ctx.audit.checkpoint().catch(failed("audit checkpoint"));
  }, config.auditCheckpointSeconds * 1000);
  sweep.unref();
  checkpoint.unref();
  return {
    async stop() {
      clearInterval(sweep);
      clearInterval(checkpoint);
      await ctx.audit.checkpoint().catch(failed("final audit checkpoint"));
    },
  };
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
