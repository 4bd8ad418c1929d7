import { describe, expect, it } from "vitest";
import { createGrantVerifier, signGrantToken } from "../../src/token/index.js";
import { freshRing, NOW, PARTIES, sampleGrant } from "./fixtures.js";

// The verifier's cache answers a token only from the entry of that exact token (its key is the
// sha256 of the whole text): a token that differs anywhere is verified in full.

describe("createGrantVerifier() cache keys", () => {
  it("verifies in full a token that differs from a cached one in its last character, and refuses it", async () => {
    const { ring } = await freshRing();
    const verifier = createGrantVerifier(ring, { ...PARTIES, maxEntries: 10 });
    const token = await signGrantToken(sampleGrant(), ring, PARTIES);
    expect((await verifier.verify(token, NOW + 1)).ok).toBe(true);
    const last = token.at(-1) === "A" ? "Q" : "A";
    const tampered = `${token.slice(0, -1)}${last}`;
    const result = await verifier.verify(tampered, NOW + 1);
    expect(result).toMatchObject({ ok: false, code: "GRANT_INVALID" });
    expect(verifier.stats()).toMatchObject({ signatureVerifications: 2, cacheHits: 0, size: 1 });
  });

  it("hands back the same grant object for the same token, and another for another token of the same grant", async () => {
    const { ring } = await freshRing();
    const verifier = createGrantVerifier(ring, { ...PARTIES, maxEntries: 10 });
    const token = await signGrantToken(sampleGrant(), ring, PARTIES);
    const other = await signGrantToken(sampleGrant({ purpose: "another purpose" }), ring, PARTIES);
    const first = await verifier.verify(token, NOW + 1);
    const again = await verifier.verify(token, NOW + 2);
    const second = await verifier.verify(other, NOW + 2);
    if (!first.ok || !again.ok || !second.ok) throw new Error("the tokens must verify");
    expect(again.grant).toBe(first.grant);
    expect(second.grant.id).toBe(first.grant.id);
    expect(second.grant).not.toBe(first.grant);
  });
});
