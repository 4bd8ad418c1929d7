import { describe, expect, it } from "vitest";
import {
  createGrantVerifier,
  signGrantToken,
  type KeyResolver,
  type KeyRing,
} from "../../src/token/index.js";
import {
  forge,
  freshRing,
  grantClaims,
  NOW,
  PARTIES,
  sampleGrant,
  strangerKey,
} from "./fixtures.js";

/** A resolver that counts key look-ups: each full verification looks the key up exactly once. */
function counting(ring: KeyRing): KeyResolver & { lookups: number } {
  const resolver = {
    lookups: 0,
    resolveKey(kid: string, now: number) {
      resolver.lookups += 1;
      return ring.resolveKey(kid, now);
    },
  };
  return resolver;
}

describe("createGrantVerifier()", () => {
  it("checks the signature on first sight only", async () => {
    const { ring } = await freshRing();
    const keys = counting(ring);
    const verifier = createGrantVerifier(keys, { ...PARTIES, maxEntries: 10 });
    const grant = sampleGrant();
    const token = await signGrantToken(grant, ring, PARTIES);

    expect(await verifier.verify(token, NOW + 1)).toEqual({ ok: true, grant });
    expect(await verifier.verify(token, NOW + 2)).toEqual({ ok: true, grant });
    expect(await verifier.verify(token, NOW + 3)).toEqual({ ok: true, grant });
    expect(keys.lookups).toBe(1);
    expect(verifier.stats()).toMatchObject({ signatureVerifications: 1, cacheHits: 2, size: 1 });
  });

  it("refuses a cached token once it has expired", async () => {
    const { ring } = await freshRing();
    const verifier = createGrantVerifier(ring, PARTIES);
    const grant = sampleGrant();
    const token = await signGrantToken(grant, ring, PARTIES);
    expect((await verifier.verify(token, NOW)).ok).toBe(true);

    expect(await verifier.verify(token, grant.expiresAt - 1)).toMatchObject({ ok: true });
    expect(await verifier.verify(token, grant.expiresAt)).toEqual({
      ok: false,
      code: "GRANT_EXPIRED",
      message: "the grant token has expired",
    });
    expect(verifier.stats().signatureVerifications).toBe(1);
    expect(await verifier.verify(token, grant.expiresAt + 1)).toMatchObject({
      ok: false,
      code: "GRANT_EXPIRED",
    });
  });

  it("refuses a cached token at a time before it is valid", async () => {
    const { ring } = await freshRing();
    const verifier = createGrantVerifier(ring, PARTIES);
    const grant = sampleGrant();
    const token = await signGrantToken(grant, ring, PARTIES);
    expect((await verifier.verify(token, NOW + 5)).ok).toBe(true);
    expect(await verifier.verify(token, grant.issuedAt - 1)).toEqual({
      ok: false,
      code: "GRANT_EXPIRED",
      message: "the grant token is not yet valid",
    });
    expect(verifier.stats()).toMatchObject({ signatureVerifications: 1, cacheHits: 1 });
  });

  it("never caches a refused token", async () => {
    const { ring } = await freshRing();
    const keys = counting(ring);
    const verifier = createGrantVerifier(keys, PARTIES);
    const forged = await forge(
      { alg: "EdDSA", kid: ring.signingKey().kid, typ: "charter-grant+jwt" },
      grantClaims(sampleGrant()),
      await strangerKey(),
    );
    for (let i = 0; i < 3; i += 1)
      expect(await verifier.verify(forged, NOW)).toMatchObject({
        ok: false,
        code: "GRANT_INVALID",
      });
    expect(keys.lookups).toBe(3);
    expect(verifier.stats()).toMatchObject({ signatureVerifications: 3, cacheHits: 0, size: 0 });
  });

  it("does not cache a token that was refused as expired, so it cannot become valid later", async () => {
    const { ring } = await freshRing();
    const verifier = createGrantVerifier(ring, PARTIES);
    const grant = sampleGrant();
    const token = await signGrantToken(grant, ring, PARTIES);
    expect(await verifier.verify(token, grant.expiresAt)).toMatchObject({
      ok: false,
      code: "GRANT_EXPIRED",
    });
    expect(verifier.stats().size).toBe(0);
  });

  it("keeps at most maxEntries tokens, forgetting the least recently used", async () => {
    const { ring } = await freshRing();
    const verifier = createGrantVerifier(ring, { ...PARTIES, maxEntries: 2 });
    const tokens = await Promise.all(
      ["g-1", "g-2", "g-3"].map((id) =>
        signGrantToken(sampleGrant({ id, rootId: id }), ring, PARTIES),
      ),
    );
    const [t1, t2, t3] = tokens as [string, string, string];
    await verifier.verify(t1, NOW);
    await verifier.verify(t2, NOW);
    await verifier.verify(t1, NOW); // t1 is now the most recently used
    await verifier.verify(t3, NOW); // evicts t2
    expect(verifier.stats()).toMatchObject({ signatureVerifications: 3, cacheHits: 1, size: 2 });
    await verifier.verify(t1, NOW);
    expect(verifier.stats().signatureVerifications).toBe(3);
    await verifier.verify(t2, NOW);
    expect(verifier.stats().signatureVerifications).toBe(4);
  });

  it("checks every token in full when maxEntries is 0", async () => {
    const { ring } = await freshRing();
    const verifier = createGrantVerifier(ring, { ...PARTIES, maxEntries: 0 });
    const token = await signGrantToken(sampleGrant(), ring, PARTIES);
    await verifier.verify(token, NOW);
    await verifier.verify(token, NOW);
    expect(verifier.stats()).toMatchObject({ signatureVerifications: 2, cacheHits: 0, size: 0 });
  });

  it("hands out a grant no caller can change", async () => {
    const { ring } = await freshRing();
    const verifier = createGrantVerifier(ring, PARTIES);
    const token = await signGrantToken(sampleGrant(), ring, PARTIES);
    const first = await verifier.verify(token, NOW);
    if (!first.ok) throw new Error(first.message);
    expect(() => (first.grant.allowed as string[]).push("files.delete")).toThrow(TypeError);
    const second = await verifier.verify(token, NOW);
    expect(second).toEqual({ ok: true, grant: sampleGrant() });
  });

  it("caches per verifier: another audience does not reuse a verified token", async () => {
    const { ring } = await freshRing();
    const token = await signGrantToken(sampleGrant(), ring, PARTIES);
    expect((await createGrantVerifier(ring, PARTIES).verify(token, NOW)).ok).toBe(true);
    expect(
      await createGrantVerifier(ring, { ...PARTIES, audience: "other" }).verify(token, NOW),
    ).toMatchObject({ ok: false, code: "GRANT_INVALID" });
  });
});

describe("createGrantVerifier() bounded memory", () => {
  it("refuses re-encodings of one token (padding, spare signature bits), so they cannot fill the cache", async () => {
    const { ring } = await freshRing();
    const verifier = createGrantVerifier(ring, { ...PARTIES, maxEntries: 100 });
    const token = await signGrantToken(sampleGrant(), ring, PARTIES);
    expect(await verifier.verify(token, NOW + 1)).toMatchObject({ ok: true });
    const [h, p, s] = token.split(".") as [string, string, string];
    // A 64-byte signature is 86 base64url characters: the last one carries 4 spare bits.
    const last = s.at(-1) as string;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const spare = alphabet[alphabet.indexOf(last) ^ 1] as string;
    expect(Buffer.from(s.slice(0, -1) + spare, "base64url")).toEqual(Buffer.from(s, "base64url"));
    for (const variant of [
      `${h}.${p}.${s.slice(0, -1)}${spare}`,
      `${h}.${p}.${s}==`,
      `${h}=.${p}.${s}`,
      `${h}.${p}.${s} `,
    ]) {
      expect(await verifier.verify(variant, NOW + 1)).toMatchObject({
        ok: false,
        code: "GRANT_INVALID",
      });
    }
    expect(verifier.stats()).toMatchObject({ size: 1, signatureVerifications: 5 });
  });

  it("bounds the bytes the cache holds, not only its entries", async () => {
    const { ring } = await freshRing();
    const token = await signGrantToken(sampleGrant(), ring, PARTIES);
    const verifier = createGrantVerifier(ring, {
      ...PARTIES,
      maxEntries: 1000,
      maxBytes: 3 * (2 * token.length + 256),
    });
    for (let i = 0; i < 10; i++) {
      const t = await signGrantToken(
        sampleGrant({ id: `grant-${i}`, rootId: `grant-${i}` }),
        ring,
        PARTIES,
      );
      expect(await verifier.verify(t, NOW + 1)).toMatchObject({ ok: true });
    }
    expect(verifier.stats().size).toBeLessThanOrEqual(3);
    expect(verifier.stats().bytes).toBeLessThanOrEqual(3 * (2 * token.length + 256));
  });
});
