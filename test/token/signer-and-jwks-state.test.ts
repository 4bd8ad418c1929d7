import { decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import {
  jwksKeyResolver,
  signReceipt,
  verifyReceipt,
  type PublicJwk,
  type KeyRing,
  type ReceiptClaims,
} from "../../src/token/index.js";
import { freshRing, NOW, PARTIES } from "./fixtures.js";

// The receipt signer lives with the ring's key (no module-level table of signers), and a JWKS
// is read when a resolver is made for it (no module-level table of resolvers per JWKS object).

const claims: ReceiptClaims = {
  decisionId: "dec-1",
  grantId: "grant-1",
  subject: "agent-7",
  actionId: "email.send",
  toolName: "send_email",
  callId: "call-1",
  argsDigest: "sha256:00",
  argumentsDigest: "00",
  catalogVersion: "v1",
};
const check = { ...PARTIES, now: NOW };

describe("the receipt signer", () => {
  it("is made once with the ring's signing key, and anew with a rotated key", async () => {
    const { ring } = await freshRing();
    const before = ring.signingKey().compact;
    expect(before).toBeDefined();
    expect(ring.signingKey().compact).toBe(before);
    await ring.rotate(NOW + 1);
    const after = ring.signingKey().compact;
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
    const token = await signReceipt(claims, ring, { ...PARTIES, now: NOW });
    expect(decodeProtectedHeader(token).kid).toBe(ring.signingKey().kid);
    expect((await verifyReceipt(token, ring, check)).ok).toBe(true);
  });

  it("signs the same receipt for a ring whose key carries no signer of its own", async () => {
    const { ring } = await freshRing();
    const { kid, privateKey } = ring.signingKey();
    const bare: KeyRing = Object.create(ring) as KeyRing;
    bare.signingKey = () => ({ kid, privateKey });
    const options = { ...PARTIES, now: NOW };
    expect(await signReceipt(claims, bare, options)).toBe(await signReceipt(claims, ring, options));
  });
});

describe("a JWKS given to verifyReceipt", () => {
  it("is read at each call: keys added to the same object later are seen", async () => {
    const { ring } = await freshRing();
    const token = await signReceipt(claims, ring, { ...PARTIES, now: NOW });
    const jwks: { keys: PublicJwk[] } = { keys: [] };
    expect(await verifyReceipt(token, jwks, check)).toMatchObject({ ok: false });
    jwks.keys.push(...ring.jwks().keys);
    expect(await verifyReceipt(token, jwks, check)).toMatchObject({ ok: true });
  });

  it("keeps what it read in a resolver made for it, which may be kept for many receipts", async () => {
    const { ring } = await freshRing();
    const token = await signReceipt(claims, ring, { ...PARTIES, now: NOW });
    const jwks: { keys: PublicJwk[] } = { keys: [...ring.jwks().keys] };
    const resolver = jwksKeyResolver(jwks);
    jwks.keys.length = 0;
    expect(await verifyReceipt(token, resolver, check)).toMatchObject({ ok: true });
    expect(await verifyReceipt(token, resolver, check)).toMatchObject({ ok: true });
    expect(jwksKeyResolver(jwks)).not.toBe(resolver);
  });
});
