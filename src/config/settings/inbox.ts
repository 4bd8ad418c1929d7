import { address, httpUrl, integer, text } from "./types.js";
import { setting } from "./setting.js";

/** The approvals inbox: a web page of its own port where approvers sign in and answer. */
export const INBOX_SETTINGS = {
  inboxListen: setting({
    type: address({ required: false }),
    default: "",
    defaultText: "(none: off)",
    env: "CHARTER_INBOX_LISTEN",
    description:
      "`host:port` of the approvals inbox (a web page on its own port); port 0 picks a free one and the log names it. Loopback only unless `tlsCert`/`tlsKey` serve it over TLS, as for `listen`: the name is resolved and every address must be loopback. With `--workers` above 1, worker 1 serves it",
    reload: "restart",
  }),
  inboxPublicUrl: setting({
    type: httpUrl(),
    default: "",
    defaultText: "(derived from the bound address)",
    env: "CHARTER_INBOX_PUBLIC_URL",
    description:
      "the inbox's base URL as approvers reach it (behind a proxy, a name): single-use links and the OIDC redirect are made from it",
    reload: "restart",
  }),
  inboxLinkTtlSeconds: setting({
    type: integer({ min: 1, max: 86_400 }),
    default: 900,
    env: "CHARTER_INBOX_LINK_TTL_SECONDS",
    description:
      "how long a single-use approval link (`charter approvals link`) stays valid, in seconds (never past its approval's expiry)",
    reload: "restart",
  }),
  inboxOidcIssuer: setting({
    type: httpUrl(),
    default: "",
    defaultText: "(none: sign-in by single-use links only)",
    env: "CHARTER_INBOX_OIDC_ISSUER",
    description:
      "the OpenID Provider approvers sign in with (authorization code with PKCE); its discovery document is read at the first sign-in (a provider that is down delays sign-in, not start-up); `http:` only on loopback",
    reload: "restart",
  }),
  inboxOidcClientId: setting({
    type: text(),
    default: "",
    env: "CHARTER_INBOX_OIDC_CLIENT_ID",
    description:
      "the inbox's client id at `inboxOidcIssuer`; its redirect URI is `<inboxPublicUrl>/oidc/callback`",
    reload: "restart",
  }),
  inboxOidcClientSecret: setting({
    type: text(),
    default: "",
    env: "CHARTER_INBOX_OIDC_CLIENT_SECRET",
    description:
      'the client\'s secret (`client_secret_basic`); "" for a public client (PKCE only). Prefer the environment variable to a config file',
    reload: "restart",
    secret: "value",
  }),
  inboxOidcClaim: setting({
    type: text({ required: true }),
    default: "email",
    env: "CHARTER_INBOX_OIDC_CLAIM",
    description:
      "the ID token claim that is the approver's principal (the owner of a grant, or an approver the directory knows); an `email` claim counts only with `email_verified` true",
    reload: "restart",
  }),
} as const;
