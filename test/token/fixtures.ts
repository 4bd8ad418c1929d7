import {
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWTHeaderParameters,
  type JWTPayload,
} from "jose";
import { onTestFinished } from "vitest";
import type { TaskGrant } from "../../src/core/grant.js";
import { openSqliteStore, type Store } from "../../src/store/index.js";
import { openKeyRing, type KeyRing } from "../../src/token/index.js";

export const ISSUER = "https://charter.test";
export const AUDIENCE = "charter-gateway";
/** The frozen clock of these tests, Unix seconds. */
export const NOW = 1_750_000_000;
export const PARTIES = { issuer: ISSUER, audience: AUDIENCE } as const;

/** A root grant with every kind of field filled in, valid from NOW for an hour. */
export function sampleGrant(overrides: Partial<Record<keyof TaskGrant, unknown>> = {}): TaskGrant {
  const grant = {
    id: "grant-1",
    rootId: "grant-1",
    parentId: null,
    chain: [],
    subject: "agent-7",
    owner: "alice",
    purpose: "triage the inbox",
    profile: "assistant",
    issuedAt: NOW,
    expiresAt: NOW + 3600,
    catalogVersion: "2025-06-01",
    allowed: ["email.read", "email.send"],
    approvalRequired: ["payments.transfer"],
    denied: ["files.delete"],
    caveats: {
      "email.send": {
        constraints: [{ type: "object", properties: { to: { pattern: "@example\\.com$" } } }],
        binds: { from: "agent@example.com" },
        rules: [
          {
            when: { properties: { cc: { minItems: 1 } }, required: ["cc"] },
            then: "require_approval",
            requirement: "owner",
            source: "mail",
          },
          { when: true, then: "deny", reason: "never on Sundays", source: "calendar" },
        ],
      },
    },
    limits: { maxCalls: 100, maxDelegationDepth: 2 },
    mode: "live",
    sources: ["base", "mail"],
    ...overrides,
  };
  return grant as TaskGrant;
}

/** A real, empty SQLite store in memory, closed when the current test ends. Call it inside a test. */
export async function sqliteMemoryStore(): Promise<Store> {
  const store = await openSqliteStore({ file: ":memory:" });
  onTestFinished(() => store.close());
  return store;
}

/** A fresh key ring over a fresh SQLite store in memory. */
export async function freshRing(now = NOW): Promise<{ store: Store; ring: KeyRing }> {
  const store = await sqliteMemoryStore();
  return { store, ring: await openKeyRing(store, { now }) };
}

/** The registered claims signGrantToken writes for `grant`, plus the grant itself. */
export function grantClaims(grant: TaskGrant): JWTPayload {
  return {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: grant.subject,
    jti: grant.id,
    iat: grant.issuedAt,
    nbf: grant.issuedAt,
    exp: grant.expiresAt,
    grant,
  };
}

/** Signs arbitrary claims with an arbitrary header and key: the attacker's (or a buggy peer's) tool. */
export function forge(
  header: JWTHeaderParameters,
  payload: JWTPayload,
  key: CryptoKey | Uint8Array,
): Promise<string> {
  return new SignJWT(payload).setProtectedHeader(header).sign(key);
}

/** An Ed25519 private key that is not in any ring. */
export async function strangerKey(): Promise<CryptoKey> {
  return (await generateKeyPair("EdDSA", { crv: "Ed25519" })).privateKey;
}

/** base64url of a JSON value, as a JWS segment. */
export function segment(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}
