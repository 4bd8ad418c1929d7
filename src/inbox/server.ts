import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthorityContext, SlackSettings } from "../authority/index.js";
import { INBOX_SCRIPT, INBOX_STYLES } from "./assets.js";
import {
  approvalIdOf,
  approvalPartial,
  decide,
  detailPage,
  listPage,
  listPartial,
} from "./approval-pages.js";
import { approvalEvents, createStreamCounts } from "./events.js";
import { HttpError, securityHeaders } from "./http.js";
import { linkPage, redeemLink } from "./link-pages.js";
import type { OidcSignIn } from "./oidc.js";
import { sendFailure, type InboxLog } from "./respond.js";
import { createSessions, type Session } from "./sessions.js";
import { slackActions } from "./slack.js";
import { callback, signedOutPage, signIn, signOut } from "./sign-in.js";

/** What the inbox serves from. */
export interface InboxOptions {
  readonly ctx: AuthorityContext;
  readonly log: InboxLog;
  /** Served over TLS: cookies are `Secure`. */
  readonly secure: boolean;
  /** OIDC sign-in, when an issuer is configured; without it only single-use links answer. */
  readonly oidc?: OidcSignIn;
  /** The inbox's base URL (the OIDC callback is read against it). */
  baseUrl(): Promise<string | undefined>;
  /** Slack's approve and reject clicks (`POST /slack/actions`), when a signing secret is set. */
  readonly slack?: SlackSettings;
}

/** The inbox's request handler, and the end of its event streams. */
export interface Inbox {
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Ends every open event stream (at shutdown). */
  close(): void;
}

const SESSION_TTL_SECONDS = 8 * 3600;
const MAX_SESSIONS = 10_000;
const LINK = /^\/l\/([A-Za-z0-9_-]{1,64})$/;
const APPROVAL = /^\/approvals\/([^/]{1,400})$/;
const APPROVAL_PARTIAL = /^\/partials\/approval\/([^/]{1,400})$/;

const STATIC: Readonly<Record<string, { readonly type: string; readonly body: string }>> = {
  "/static/inbox.js": { type: "text/javascript; charset=utf-8", body: INBOX_SCRIPT },
  "/static/inbox.css": { type: "text/css; charset=utf-8", body: INBOX_STYLES },
};

/**
 * The approvals inbox over node:http: the list and detail pages of a signed-in approver (OIDC),
 * their live updates (server-sent events), single-use links, its own script and stylesheet. Every
 * answer carries a strict Content-Security-Policy; every POST needs its session's CSRF token;
 * every decision goes through the application layer's `decideApproval` as `approverActor`.
 */
export function createInbox(options: InboxOptions): Inbox {
  const { ctx, log } = options;
  const sessions = createSessions({ ttlSeconds: SESSION_TTL_SECONDS, max: MAX_SESSIONS });
  const shutdown = new AbortController();
  const streams = createStreamCounts();

  const signedIn = (req: IncomingMessage): (Session & { principal: string }) | undefined => {
    const session = sessions.of(req);
    return session?.principal === undefined
      ? undefined
      : (session as Session & { principal: string });
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://inbox.invalid");
    const path = url.pathname;
    const method = req.method ?? "GET";
    const only = (allowed: string) => {
      if (method !== allowed) throw new HttpError(405, `${path} answers ${allowed} only`);
    };
    const asset = STATIC[path];
    if (asset !== undefined) {
      only("GET");
      res.writeHead(200, { ...securityHeaders(), "content-type": asset.type });
      res.end(asset.body);
      return;
    }
    const link = LINK.exec(path);
    if (link) {
      const token = link[1] as string;
      if (method === "GET") return linkPage(ctx, sessions, options.secure, token, req, res);
      if (method === "POST") return redeemLink(ctx, sessions, token, req, res);
      throw new HttpError(405, "a link answers GET and POST only");
    }
    if (path === "/signin") {
      only("GET");
      return signIn(options.oidc, sessions, options.secure, req, res);
    }
    if (path === "/oidc/callback") {
      only("GET");
      return callback(options, sessions, req, res);
    }
    if (path === "/slack/actions") {
      only("POST");
      return slackActions(ctx, options.slack, req, res);
    }
    if (path === "/signout") {
      only("POST");
      return signOut(sessions, options.secure, req, res);
    }
    const session = signedIn(req);
    if (session === undefined) {
      if (path === "/" && method === "GET") {
        signedOutPage(options.oidc !== undefined, res);
        return;
      }
      throw new HttpError(401, "Sign in first.");
    }
    if (path === "/") {
      only("GET");
      return listPage(ctx, session, res);
    }
    if (path === "/events") {
      only("GET");
      approvalEvents(ctx, session.principal, req, res, {
        shutdown: shutdown.signal,
        log,
        open: streams,
      });
      return;
    }
    if (path === "/partials/list") {
      only("GET");
      return listPartial(ctx, session.principal, res);
    }
    const partial = APPROVAL_PARTIAL.exec(path);
    if (partial) {
      only("GET");
      return approvalPartial(ctx, session.principal, approvalIdOf(partial[1] as string), res);
    }
    const approval = APPROVAL.exec(path);
    if (approval) {
      const id = approvalIdOf(approval[1] as string);
      if (method === "GET") return detailPage(ctx, session, id, url.searchParams.get("done"), res);
      if (method === "POST") return decide(ctx, session, id, req, res);
      throw new HttpError(405, "an approval answers GET and POST only");
    }
    throw new HttpError(404, "There is no such page.");
  };

  return {
    handle(req, res) {
      route(req, res).catch((err: unknown) => sendFailure(res, err, log));
    },
    close() {
      shutdown.abort();
    },
  };
}
