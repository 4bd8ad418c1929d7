import { join } from "node:path";
import { base64url, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskGrant } from "../../src/core/grant.js";
import { Decision } from "../../src/gen/charter/v1/common_pb.js";
import { openSqliteStore, type Store } from "../../src/store/index.js";
import { openKeyRing, signGrantToken, type KeyRing } from "../../src/token/index.js";
import { startTestCharter, type TestCharter } from "../support/charter-server.js";

const UNAUTHENTICATED = 16;
let charter: TestCharter;
let store: Store;
let ring: KeyRing;
let genuine: { token: string; grant: TaskGrant };

beforeAll(async () => {
  charter = await startTestCharter();
  // The server's own key, read from its data dir: tokens with bad claims but a genuine signature.
  store = await openSqliteStore({ file: join(charter.dataDir, "charter.db") });
  ring = await openKeyRing(store, { now: Math.floor(Date.now() / 1000) });
  const issued = await charter.clients.grants.issueGrant({
    profile: "owner-assistant",
    subject: "agent:a",
    owner: "ana@example.com",
    purpose: "p",
  });
  const payload = JSON.parse(
    new TextDecoder().decode(base64url.decode(issued.grantToken.split(".")[1] as string)),
  ) as { grant: TaskGrant };
  genuine = { token: issued.grantToken, grant: payload.grant };
});
afterAll(async () => {
  await store.close();
  await charter.stop();
});

const now = () => Math.floor(Date.now() / 1000);
const header = (token: string) =>
  JSON.parse(new TextDecoder().decode(base64url.decode(token.split(".")[0] as string))) as {
    kid: string;
  };
const claimsOf = (
  grant: TaskGrant,
  iss = charter.config.issuer,
  aud = charter.config.audience,
) => ({
  iss,
  aud,
  sub: grant.subject,
  jti: grant.id,
  iat: grant.issuedAt,
  nbf: grant.issuedAt,
  exp: grant.expiresAt,
  grant,
});

async function signedByStranger(kid: string): Promise<string> {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
  return new SignJWT(claimsOf(genuine.grant))
    .setProtectedHeader({ alg: "EdDSA", kid, typ: "charter-grant+jwt" })
    .sign(privateKey);
}

function tamper(token: string): string {
  const [h, p, s] = token.split(".") as [string, string, string];
  const payload = JSON.parse(new TextDecoder().decode(base64url.decode(p))) as { grant: TaskGrant };
  const widened = {
    ...payload,
    grant: { ...payload.grant, allowed: [...payload.grant.allowed, "shell.exec"], denied: [] },
  };
  return `${h}.${base64url.encode(JSON.stringify(widened))}.${s}`;
}

const attacks: [string, () => Promise<string>, "GRANT_INVALID" | "GRANT_EXPIRED"][] = [
  [
    "signed by another key under the server's kid",
    () => signedByStranger(header(genuine.token).kid),
    "GRANT_INVALID",
  ],
  [
    "signed by another key under an unknown kid",
    () => signedByStranger("not-a-charter-key"),
    "GRANT_INVALID",
  ],
  [
    "alg none",
    async () => {
      const h = base64url.encode(
        JSON.stringify({ alg: "none", typ: "charter-grant+jwt", kid: header(genuine.token).kid }),
      );
      return `${h}.${base64url.encode(JSON.stringify(claimsOf(genuine.grant)))}.`;
    },
    "GRANT_INVALID",
  ],
  [
    "HS256 keyed with the server's public key",
    async () => {
      const jwks = (await charter.clients.keys.getJwks({})).jwksJson;
      const x = (JSON.parse(jwks) as { keys: { x: string }[] }).keys[0]?.x ?? "";
      return new SignJWT(claimsOf(genuine.grant))
        .setProtectedHeader({
          alg: "HS256",
          kid: header(genuine.token).kid,
          typ: "charter-grant+jwt",
        })
        .sign(new TextEncoder().encode(x));
    },
    "GRANT_INVALID",
  ],
  [
    "a receipt presented as a grant",
    async () => {
      const { verdict } = await charter.clients.authority.authorize({
        grantToken: genuine.token,
        call: {
          callId: "r",
          toolName: "web_search",
          argumentsJson: JSON.stringify({ query: "charter" }),
        },
      });
      if (!verdict?.receipt) throw new Error("expected an allow with a receipt");
      return verdict.receipt;
    },
    "GRANT_INVALID",
  ],
  [
    "the wrong issuer",
    () =>
      signGrantToken(genuine.grant, ring, {
        issuer: "someone-else",
        audience: charter.config.audience,
      }),
    "GRANT_INVALID",
  ],
  [
    "the wrong audience",
    () =>
      signGrantToken(genuine.grant, ring, {
        issuer: charter.config.issuer,
        audience: "another-service",
      }),
    "GRANT_INVALID",
  ],
  ["a tampered payload that widens the grant", async () => tamper(genuine.token), "GRANT_INVALID"],
  [
    "an expired grant",
    () =>
      signGrantToken({ ...genuine.grant, issuedAt: now() - 7200, expiresAt: now() - 3600 }, ring, {
        issuer: charter.config.issuer,
        audience: charter.config.audience,
      }),
    "GRANT_EXPIRED",
  ],
  [
    "a grant not valid yet",
    () =>
      signGrantToken({ ...genuine.grant, issuedAt: now() + 3600, expiresAt: now() + 7200 }, ring, {
        issuer: charter.config.issuer,
        audience: charter.config.audience,
      }),
    "GRANT_EXPIRED",
  ],
  ["garbage", async () => "not.a.token", "GRANT_INVALID"],
];

describe("a grant token attack", () => {
  it("first, the genuine token works (so the refusals below are about the attack)", async () => {
    await expect(
      charter.clients.catalog.getCatalog({ grantToken: genuine.token }),
    ).resolves.toMatchObject({ view: { grantId: genuine.grant.id } });
  });

  it.each(attacks)("%s: GetCatalog answers UNAUTHENTICATED", async (_name, forge, code) => {
    const token = await forge();
    await expect(charter.clients.catalog.getCatalog({ grantToken: token })).rejects.toMatchObject({
      code: UNAUTHENTICATED,
      details: expect.stringMatching(new RegExp(`^${code}: `)) as unknown,
    });
  });

  it.each(attacks)(
    "%s: Authorize answers a deny verdict with the reason",
    async (_name, forge, code) => {
      const token = await forge();
      const { verdict } = await charter.clients.authority.authorize({
        grantToken: token,
        call: {
          callId: "x",
          toolName: "web_search",
          argumentsJson: JSON.stringify({ query: "charter" }),
        },
      });
      expect(verdict).toMatchObject({ decision: Decision.DENY, reason: { code }, receipt: "" });
      expect(verdict?.reason?.message).not.toContain(token);
    },
  );
});
