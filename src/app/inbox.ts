import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Logger } from "pino";
import { ConfigError, type CharterConfig } from "../config/config.js";
import { createInbox } from "../inbox/server.js";
import { createOidcSignIn, SignInError, type OidcSignIn } from "../inbox/oidc.js";
import type { AppContext } from "./context.js";
import { planListen } from "./listen.js";

/** A serving inbox. */
export interface RunningInbox {
  /** Its URL as bound: `http(s)://host:port`. */
  readonly url: string;
  close(): Promise<void>;
}

/** The worker of `--workers N` that serves the inbox: one process, so sessions need no sharing. */
export const INBOX_WORKER = 1;

/**
 * Starts the approvals inbox on `inboxListen` (its own port) when configured, in a single process
 * or in worker {@link INBOX_WORKER} of a cluster (undefined elsewhere). Its address is judged by
 * what the name resolves to, as `listen` is: anything but loopback needs TLS (`tlsCert` and
 * `tlsKey`, the gRPC port's). A cluster worker binds the port itself (`exclusive`), not through
 * the primary's shared sockets. The bound URL is logged ("charter inbox listening on …") and
 * recorded for links made elsewhere.
 */
export async function startInbox(
  config: CharterConfig,
  ctx: AppContext,
  log: Logger,
  worker: number | undefined,
): Promise<RunningInbox | undefined> {
  if (config.inboxListen === "" || (worker !== undefined && worker !== INBOX_WORKER))
    return undefined;
  const plan = await planListen(config.inboxListen).catch((err: unknown) => {
    throw new ConfigError(`inboxListen: ${(err as Error).message}`);
  });
  const tls = config.tlsCert !== "";
  if (!plan.loopbackOnly && !tls)
    throw new ConfigError(
      `refusing to serve the inbox on ${config.inboxListen} (${plan.addresses.join(", ")}): sign-in sessions and links would travel in plaintext, so the inbox is served on loopback only without TLS; configure tlsCert and tlsKey to serve it elsewhere`,
    );
  const address = ctx.approvalLinks;
  if (address === undefined) throw new Error("the inbox's address is missing from the context");
  const oidc = oidcSignIn(config, () => address.baseUrl());
  const inbox = createInbox({
    ctx,
    log: log.child({ component: "inbox" }),
    secure: tls,
    ...(oidc ? { oidc } : {}),
    baseUrl: () => address.baseUrl(),
    ...(config.slackSigningSecret === ""
      ? {}
      : { slack: { signingSecret: config.slackSigningSecret, teamId: config.slackTeamId } }),
  });
  const server: Server = tls
    ? createHttpsServer({ cert: readFileSync(config.tlsCert), key: readFileSync(config.tlsKey) })
    : createHttpServer();
  server.on("request", (req, res) => inbox.handle(req, res));
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const host = plan.addresses[0] as string;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port: plan.port, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch((err: unknown) => {
    throw new ConfigError(
      `inboxListen: cannot listen on ${config.inboxListen} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  });
  const bound = server.address();
  const port = typeof bound === "object" && bound !== null ? bound.port : plan.port;
  const url = `${tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${port}`;
  await address.bound(url);
  log.info({ address: url, oidc: oidc !== undefined }, `charter inbox listening on ${url}`);
  return {
    url,
    async close() {
      inbox.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 2000).unref();
      await closed;
    },
  };
}

function oidcSignIn(
  config: CharterConfig,
  baseUrl: () => Promise<string | undefined>,
): OidcSignIn | undefined {
  if (config.inboxOidcIssuer === "") return undefined;
  if (config.inboxOidcClientId === "")
    throw new ConfigError("inboxOidcIssuer is set but inboxOidcClientId is not");
  try {
    return createOidcSignIn({
      issuer: config.inboxOidcIssuer,
      clientId: config.inboxOidcClientId,
      clientSecret: config.inboxOidcClientSecret,
      claim: config.inboxOidcClaim,
      baseUrl,
    });
  } catch (err) {
    if (err instanceof SignInError) throw new ConfigError(err.message);
    throw err;
  }
}
