import { Server } from "@grpc/grpc-js";
import type { Logger } from "pino";
import {
  createRefusalTally,
  hasApiKeys,
  pruneApprovalLinks,
  pruneEndorsements,
  pruneDecisionInputs,
  pruneExpiredGrants,
  type Notifier,
  type RefusalTally,
  type WebhookDeliverer,
} from "../authority/index.js";
import type { CharterConfig } from "../config/config.js";
import { decideAuthMode } from "./auth-mode.js";
import { authenticationInterceptor } from "../server/authentication.js";
import { HEALTH_FILE, createHealth } from "../server/health.js";
import { storeIntegrityInterceptor } from "../server/store-integrity.js";
import { loggingInterceptor } from "../server/logging.js";
import { guardedConnectionInjector, requestFramingInterceptor } from "../server/request-framing.js";
import { telemetryInterceptor } from "../server/telemetry.js";
import { requestLimits, serverOptions } from "./limits.js";
import { bindAll } from "./listener.js";
import { startHousekeeping } from "./housekeeping.js";
import { createConnectionPool, type ConnectionStats } from "./connection-pool.js";
import { addReflection } from "../server/reflection.js";
import { CONTRACT_FILES, charterServices } from "../server/services.js";
import { createAppContext, type AppContext } from "./context.js";
import { startInbox, type RunningInbox } from "./inbox.js";
import { checkExposure, planListen } from "./listen.js";
import { startProcessTelemetry, type ProcessTelemetry } from "./telemetry.js";
import { transportSecurity } from "./tls.js";
import { loadWebhooks, startWebhooks } from "./webhooks.js";

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
  /** The approvals inbox's URL, when this process serves it (`inboxListen`; worker 1 of a cluster). */
  readonly inboxUrl?: string;
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
  let inbox: RunningInbox | undefined;
  let webhooks: WebhookDeliverer | undefined;
  try {
    const webhookSet = await loadWebhooks(config);
    telemetry = await startProcessTelemetry(config, ctx, log, options.worker, {
      webhookDeliveries: () => webhooks?.deliveries() ?? [],
    });
    const keys = await hasApiKeys(ctx);
    checkExposure(config.listen, plan, { keys, mutualTls: security.mutual });
    const protectedMode = await decideAuthMode(ctx, config, {
      loopbackOnly: plan.loopbackOnly,
      mutualTls: security.mutual,
      keys,
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

    inbox = await startInbox(config, ctx, log, options.worker);
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
      pruneApprovalLinks(ctx).catch((err: unknown) =>
        log.warn({ err: { message: (err as Error).message } }, "pruning approval links failed"),
      );
      pruneEndorsements(ctx).catch((err: unknown) =>
        log.warn({ err: { message: (err as Error).message } }, "pruning endorsements failed"),
      );
      pruneDecisionInputs(ctx).then(
        (pruned) => {
          if (pruned > 0) log.info({ pruned }, "decision inputs past their retention pruned");
        },
        (err: unknown) =>
          log.warn({ err: { message: (err as Error).message } }, "pruning decision inputs failed"),
      );
    }, config.pruneIntervalSeconds * 1000);
    pruning.unref();
    const housekeeping = startHousekeeping(ctx, config, log);
    webhooks = startWebhooks(ctx, webhookSet, config, log, options.worker);
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
      ...(inbox === undefined ? {} : { inboxUrl: inbox.url }),
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
        const closed = Promise.all([...listeners.map((l) => l.close()), inbox?.close()]);
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
        await webhooks?.stop();
        await housekeeping.stop();
        await telemetry?.stop();
        await ctx.close();
        log.info(options.worker === undefined ? "charter stopped" : "worker stopped");
      },
    };
  } catch (err) {
    clearInterval(keyReload);
    await refusals?.close().catch(() => undefined);
    await webhooks?.stop();
    shutdown.abort();
    await inbox?.close();
    server.forceShutdown();
    await telemetry?.stop();
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
