import { describe, expect, it } from "vitest";
import { createGrantVerifier, signGrantToken, type KeyResolver, type KeyRing } from "../../src/token/index.js";
import { forge, freshRing, grantClaims, NOW, PARTIES, sampleGrant, strangerKey } from "./fixtures.js";

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
    expect(verifier.stats()).toEqual({ signatureVerifications: 1, cacheHits: 2, size: 1 });
  });

  it("refuses a cached token once it has expired", async () => {
    const { ring } = await freshRing();
    const verifier = createGrantVerifier(ring, PARTIES);
    const grant = sampleGrant();
    const token = await signGrantToken(grant, ring, PARTIES);
    expect((await verifier.verify(token, NOW)).ok).toBe(true);

    expect(await verifier.verify(token, grant.expiresAt - 1)).toMatchObject({ ok: true });
    expect(await verifier.verify(token, grant.expiresAt)).toEqual({ ok: false, code: "GRANT_EXPIRED", message: "the grant token has expired" });
    expect(verifier.stats().signatureVerifications).toBe(1);
    expect(await verifier.verify(token, grant.expiresAt + 1)).toMatchObject({ ok: false, code: "GRANT_EXPIRED" });
  });

  it("refuses a cached token at a time before it is valid", async () => {
    const { ring } = await freshRing();
    const verifier = createGrantVerifier(ring, PARTIES);
    const grant = sampleGrant();
    const token = await signGrantToken(grant, ring, PARTIES);
    expect((await verifier.verify(token, NOW + 5)).ok).toBe(true);
    expect(await verifier.verify(token, grant.issuedAt - 1)).toEqual({ ok: false, code: "GRANT_EXPIRED", message: "the grant token is not yet valid" });
    expect(verifier.stats()).toMatchObject({ signatureVerifications: 1, cacheHits: 1 });
  });

  it("never caches a refused token", async () => {
    const { ring } = await freshRing();
    const keys = counting(ring);
    const verifier = createGrantVerifier(keys, PARTIES);
    const forged = await forge({ alg: "EdDSA", kid: ring.signingKey().kid, typ: "charter-grant+jwt" }, grantClaims(sampleGrant()), await strangerKey());
    for (let i = 0; i < 3; i += 1) expect(await verifier.verify(forged, NOW)).toMatchObject({ ok: false, code: "GRANT_INVALID" });
    expect(keys.lookups).toBe(3);
    expect(verifier.stats()).toEqual({ signatureVerifications: 3, cacheHits: 0, size: 0 });
  });

  it("does not cache a token that was refused as expired, so it cannot become valid later", async () => {
    const { ring } = await freshRing();
    const verifier = createGrantVerifier(ring, PARTIES);
    const grant = sampleGrant();
    const token = await signGrantToken(grant, ring, PARTIES);
    expect(await verifier.verify(token, grant.expiresAt)).toMatchObject({ ok: false, code: "GRANT_EXPIRED" });
    expect(verifier.stats().size).toBe(0);
  });

  it("keeps at most maxEntries tokens, forgetting the least recently used", async () => {
    const { ring } = await freshRing();
    const verifier = createGrantVerifier(ring, { ...PARTIES, maxEntries: 2 });
    const tokens = await Promise.all(["g-1", "g-2", "g-3"].map((id) => signGrantToken(sampleGrant({ id, rootId: id }), ring, PARTIES)));
    const [t1, t2, t3] = tokens as [string, string, string];
    await verifier.verify(t1, NOW);
    await verifier.verify(t2, NOW);
    await verifier.verify(t1, NOW); // t1 is now the most recently used
    await verifier.verify(t3, NOW); // evicts t2
    expect(verifier.stats()).toEqual({ signatureVerifications: 3, cacheHits: 1, size: 2 });
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
    expect(verifier.stats()).toEqual({ signatureVerifications: 2, cacheHits: 0, size: 0 });
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
    expect(await createGrantVerifier(ring, { ...PARTIES, audience: "other" }).verify(token, NOW)).toMatchObject({ ok: false, code: "GRANT_INVALID" });
  });
});
