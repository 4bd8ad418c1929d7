import { clientRoles, optionalChoice, spiffeRoles, text } from "./types.js";
import { setting } from "./setting.js";

/** TLS, mutual TLS and the key-encryption key that seals signing keys at rest. */
export const SECURITY_SETTINGS = {
  auth: setting({
    type: optionalChoice(["keys", "none"]),
    defaultText: "keys",
    env: "CHARTER_AUTH",
    description:
      "`keys`: every caller needs an API key or a client certificate; an anonymous call is refused (create a key offline with `charter keys create`). `none` (protected mode, the quick start's): allowed only on loopback without `tlsClientCa`; anonymous local callers act as admin until the store's first API key is created, which ends protected mode for good (revoking every key does not bring it back)",
    reload: "restart",
    optional: true,
  }),
  tlsCert: setting({
    type: text({ shape: 'file or "" (plaintext)' }),
    default: "",
    env: "CHARTER_TLS_CERT",
    description: "PEM certificate chain; with `tlsKey` the server speaks TLS",
    reload: "restart",
  }),
  tlsKey: setting({
    type: text({ shape: 'file or "" (plaintext)' }),
    default: "",
    env: "CHARTER_TLS_KEY",
    description: "PEM private key of `tlsCert`; must be readable by its owner only",
    reload: "restart",
  }),
  tlsClientCa: setting({
    type: text({ shape: 'file or "" (off)' }),
    default: "",
    env: "CHARTER_TLS_CLIENT_CA",
    description: "PEM CA bundle: clients must present a certificate it signed (mutual TLS)",
    reload: "restart",
  }),
  tlsClientRoles: setting({
    type: clientRoles(),
    default: "",
    env: "CHARTER_TLS_CLIENT_ROLES",
    description:
      "client certificate subject CN → roles: `gateway-1=gateway;ops=admin,auditor` (in the config file also a map `{gateway-1: [gateway]}`)",
    reload: "restart",
  }),
  tlsSpiffeRoles: setting({
    type: spiffeRoles(),
    default: "",
    env: "CHARTER_TLS_SPIFFE_ROLES",
    description:
      "SPIFFE ID (the client certificate's one URI SAN) → roles: `spiffe://prod.example/ns/agents/sa/gateway=gateway;spiffe://prod.example/ops/*=auditor` (exact IDs first, then the longest `/*` prefix; in the config file also a map). A certificate with a SPIFFE ID is identified by it alone, never by its CN; an ID no entry covers is refused",
    reload: "restart",
  }),
  kekFile: setting({
    type: text({ shape: 'file or ""' }),
    default: "",
    env: "CHARTER_KEK_FILE",
    description:
      "file holding the key-encryption key (32 bytes, base64 or hex; mode 0600) that seals signing keys at rest (AES-256-GCM); keys stored in clear before are sealed at start",
    reload: "restart",
  }),
  slackSigningSecret: setting({
    type: text({ shape: "Slack app signing secret" }),
    default: "",
    env: "CHARTER_SLACK_SIGNING_SECRET",
    description:
      "the Slack app's signing secret (never logged; prefer the environment to a config file). With it, approve and reject clicks on Charter's Slack messages are accepted when Slack signed them within 5 minutes and the clicker's Slack user is an approver in the directory (`slack:`); without it none are",
    reload: "restart",
    secret: "value",
  }),
  slackTeamId: setting({
    type: text({ shape: 'Slack team id or "" (any)' }),
    default: "",
    env: "CHARTER_SLACK_TEAM_ID",
    description:
      "the one Slack workspace whose clicks answer approvals; a click from another is refused",
    reload: "restart",
  }),
  kek: setting({
    type: text({ shape: "32 bytes, base64 or hex" }),
    default: "",
    env: "CHARTER_KEK",
    description:
      "the key-encryption key itself; environment only (refused in a config file). A `postgres://` database requires a KEK",
    reload: "restart",
    secret: "value",
    fileInstead: "kekFile",
  }),
} as const;
