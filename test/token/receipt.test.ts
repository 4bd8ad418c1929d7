import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import {
  isTokenError,
  signGrantToken,
  signReceipt,
  verifyGrantToken,
  verifyReceipt,
  type Jwks,
  type ReceiptClaims,
} from "../../src/token/index.js";
import { forge, freshRing, NOW, PARTIES, sampleGrant, strangerKey } from "./fixtures.js";

const claims: ReceiptClaims = {
  decisionId: "dec-42",
  grantId: "grant-1",
  subject: "agent-7",
  actionId: "email.send",
  toolName: "send_email",
  resource: "mailbox/bob@example.com",
  callId: "call-9",
  argsDigest: "sha256:3f1c",
  argumentsDigest: "9c2e",
  catalogVersion: "2025-06-01",
};
const signAt = (now: number, ttlSeconds?: number) => ({
  ...PARTIES,
  now,
  ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
});

describe("signReceipt()", () => {
  it("binds the decision in a short-lived token of typ charter-receipt+jwt", async () => {
    const { ring } = await freshRing();
    const token = await signReceipt(claims, ring, signAt(NOW));
    expect(decodeProtectedHeader(token)).toEqual({
      alg: "EdDSA",
      kid: ring.signingKey().kid,
      typ: "charter-receipt+jwt",
    });
    expect(decodeJwt(token)).toEqual({
      iss: PARTIES.issuer,
      aud: PARTIES.audience,
      sub: "agent-7",
      jti: "dec-42",
      iat: NOW,
      exp: NOW + 300,
      grant_id: "grant-1",
      action_id: "email.send",
      tool_name: "send_email",
      resource: "mailbox/bob@example.com",
      call_id: "call-9",
      args_digest: "sha256:3f1c",
      arguments_digest: "9c2e",
      catalog_version: "2025-06-01",
    });
  });

  it("is byte for byte the token jose's SignJWT makes of the same claims, and jose verifies it", async () => {
    const { ring } = await freshRing();
    const { kid, privateKey } = ring.signingKey();
    const withoutResource: ReceiptClaims = Object.fromEntries(
      Object.entries(claims).filter(([k]) => k !== "resource"),
    ) as unknown as ReceiptClaims;
    for (const c of [claims, withoutResource, { ...claims, toolName: "", callId: "ünïcode ✓" }]) {
      const token = await signReceipt(c, ring, signAt(NOW));
      const {
        decisionId,
        subject,
        grantId,
        actionId,
        toolName,
        resource,
        callId,
        argsDigest,
        argumentsDigest,
        catalogVersion,
      } = c;
      const payload = {
        grant_id: grantId,
        action_id: actionId,
        tool_name: toolName,
        ...(resource === undefined ? {} : { resource }),
        call_id: callId,
        args_digest: argsDigest,
        arguments_digest: argumentsDigest,
        catalog_version: catalogVersion,
      };
      const expected = await new SignJWT(payload)
        .setProtectedHeader({ alg: "EdDSA", kid, typ: "charter-receipt+jwt" })
        .setIssuer(PARTIES.issuer)
        .setAudience(PARTIES.audience)
        .setSubject(subject)
        .setJti(decisionId)
        .setIssuedAt(NOW)
        .setExpirationTime(NOW + 300)
        .sign(privateKey);
      expect(token).toBe(expected);
      const verified = await jwtVerify(token, createLocalJWKSet(ring.jwks() as never), {
        ...PARTIES,
        currentDate: new Date(NOW * 1000),
        typ: "charter-receipt+jwt",
      });
      expect(verified.payload.jti).toBe(decisionId);
    }
  });

  it("refuses a non-positive ttl and malformed claims", async () => {
    const { ring } = await freshRing();
    for (const ttl of [0, -5, 1.5]) {
      await expect(signReceipt(claims, ring, signAt(NOW, ttl))).rejects.toSatisfy(
        (err) => isTokenError(err) && err.code === "INVALID_INPUT",
      );
    }
    await expect(signReceipt({ ...claims, argsDigest: "" }, ring, signAt(NOW))).rejects.toSatisfy(
      (err) => isTokenError(err) && /argsDigest/.test(err.message),
    );
  });
});

describe("verifyReceipt()", () => {
  it("answers the receipt's claims, verified against the ring", async () => {
    const { ring } = await freshRing();
    const token = await signReceipt(claims, ring, signAt(NOW, 60));
    expect(await verifyReceipt(token, ring, { ...PARTIES, now: NOW + 59 })).toEqual({
      ok: true,
      receipt: { ...claims, issuedAt: NOW, expiresAt: NOW + 60 },
    });
  });

  it("verifies offline against the published JWKS, across a rotation", async () => {
    const { ring } = await freshRing();
    const before = await signReceipt(claims, ring, signAt(NOW));
    await ring.rotate(NOW + 1);
    const after = await signReceipt({ ...claims, decisionId: "dec-43" }, ring, signAt(NOW + 1));
    const jwks = JSON.parse(JSON.stringify(ring.jwks())) as Jwks;
    expect(await verifyReceipt(before, jwks, { ...PARTIES, now: NOW + 2 })).toMatchObject({
      ok: true,
      receipt: { decisionId: "dec-42" },
    });
    expect(await verifyReceipt(after, jwks, { ...PARTIES, now: NOW + 2 })).toMatchObject({
      ok: true,
      receipt: { decisionId: "dec-43" },
    });
  });

  it("leaves out resource when the call has none", async () => {
    const { ring } = await freshRing();
    const { resource: _resource, ...withoutResource } = claims;
    const result = await verifyReceipt(
      await signReceipt(withoutResource, ring, signAt(NOW)),
      ring,
      { ...PARTIES, now: NOW },
    );
    expect(result).toEqual({
      ok: true,
      receipt: { ...withoutResource, issuedAt: NOW, expiresAt: NOW + 300 },
    });
  });

  it("refuses an expired receipt, unless within the caller's clock tolerance", async () => {
    const { ring } = await freshRing();
    const token = await signReceipt(claims, ring, signAt(NOW));
    expect(await verifyReceipt(token, ring, { ...PARTIES, now: NOW + 300 })).toEqual({
      ok: false,
      code: "RECEIPT_EXPIRED",
      message: "the receipt has expired",
    });
    expect(
      await verifyReceipt(token, ring, { ...PARTIES, now: NOW + 305, clockToleranceSeconds: 10 }),
    ).toMatchObject({ ok: true });
    expect(
      await verifyReceipt(token, ring, { ...PARTIES, now: NOW + 311, clockToleranceSeconds: 10 }),
    ).toMatchObject({ ok: false, code: "RECEIPT_EXPIRED" });
  });

  it("refuses a grant token presented as a receipt", async () => {
    const { ring } = await freshRing();
    const grantToken = await signGrantToken(sampleGrant(), ring, PARTIES);
    expect(await verifyReceipt(grantToken, ring, { ...PARTIES, now: NOW })).toEqual({
      ok: false,
      code: "RECEIPT_INVALID",
      message: "the token is not a receipt (wrong typ)",
    });
  });

  it("is refused when presented as a grant token", async () => {
    const { ring } = await freshRing();
    const receipt = await signReceipt(claims, ring, signAt(NOW));
    expect(await verifyGrantToken(receipt, ring, { ...PARTIES, now: NOW })).toEqual({
      ok: false,
      code: "GRANT_INVALID",
      message: "the token is not a grant token (wrong typ)",
    });
  });

  it("refuses a receipt signed by another key, for another audience, or from another issuer", async () => {
    const { ring } = await freshRing();
    const forged = await forge(
      { alg: "EdDSA", kid: ring.signingKey().kid, typ: "charter-receipt+jwt" },
      decodeJwt(await signReceipt(claims, ring, signAt(NOW))),
      await strangerKey(),
    );
    expect(await verifyReceipt(forged, ring.jwks(), { ...PARTIES, now: NOW })).toMatchObject({
      ok: false,
      code: "RECEIPT_INVALID",
      message: "the receipt's signature does not verify",
    });
    const token = await signReceipt(claims, ring, signAt(NOW));
    expect(
      await verifyReceipt(token, ring, { ...PARTIES, audience: "tool-b", now: NOW }),
    ).toMatchObject({
      ok: false,
      code: "RECEIPT_INVALID",
      message: "the receipt is meant for another audience",
    });
    expect(
      await verifyReceipt(token, ring, { ...PARTIES, issuer: "https://evil.test", now: NOW }),
    ).toMatchObject({
      ok: false,
      code: "RECEIPT_INVALID",
      message: "the receipt was issued by another issuer",
    });
  });

  it("refuses a receipt whose signed claims have the wrong types", async () => {
    const { ring } = await freshRing();
    const { kid, privateKey } = ring.signingKey();
    const payload = { ...decodeJwt(await signReceipt(claims, ring, signAt(NOW))), tool_name: 7 };
    const token = await forge(
      { alg: "EdDSA", kid, typ: "charter-receipt+jwt" },
      payload,
      privateKey,
    );
    expect(await verifyReceipt(token, ring, { ...PARTIES, now: NOW })).toEqual({
      ok: false,
      code: "RECEIPT_INVALID",
      message: "the receipt is malformed: toolName must be a string",
    });
  });

  it("ignores JWKS entries that are not Ed25519 signing keys", async () => {
    const { ring } = await freshRing();
    const token = await signReceipt(claims, ring, signAt(NOW));
    const [key] = ring.jwks().keys;
    if (!key) throw new Error("no key");
    const jwks = {
      keys: [
        { ...key, use: "enc" },
        { ...key, alg: "ES256" },
        { ...key, crv: "X25519" },
        { kty: "oct", k: "c2VjcmV0", kid: key.kid },
      ],
    } as unknown as Jwks;
    expect(await verifyReceipt(token, jwks, { ...PARTIES, now: NOW })).toMatchObject({
      ok: false,
      code: "RECEIPT_INVALID",
      message: "the receipt is not signed by a known key",
    });
  });
});
