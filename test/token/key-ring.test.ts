import { calculateJwkThumbprint, decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import { isStoreError, type KeyStore, type StoredKey } from "../../src/store/port.js";
import {
  isTokenError,
  openKeyRing,
  signGrantToken,
  verifyGrantToken,
} from "../../src/token/index.js";
import {
  forge,
  freshRing,
  grantClaims,
  NOW,
  PARTIES,
  sampleGrant,
  sqliteMemoryStore,
  strangerKey,
} from "./fixtures.js";
import { spyKeyStore } from "./key-store-spy.js";

/** A real store holding exactly `key`, written as is (the store does not check key material). */
async function storeHolding(key: StoredKey): Promise<KeyStore> {
  const store = await sqliteMemoryStore();
  await store.insertKey(key);
  return store;
}

/** A real store that has been closed: every call fails UNAVAILABLE. */
async function closedStore(): Promise<KeyStore> {
  const store = await sqliteMemoryStore();
  await store.close();
  return store;
}

const verifyAt = (now: number) => ({ ...PARTIES, now });

describe("openKeyRing()", () => {
  it("generates, stores and uses an Ed25519 key named by its RFC 7638 thumbprint on first start", async () => {
    const { store, ring } = await freshRing();
    const stored = await store.listKeys();
    expect(stored).toHaveLength(1);
    const [key] = stored;
    expect(key).toMatchObject({ kid: ring.signingKey().kid, alg: "EdDSA", createdAt: NOW });
    const publicJwk = JSON.parse(key?.publicJwk ?? "") as { kty: string; crv: string; x: string };
    expect(publicJwk).toMatchObject({ kty: "OKP", crv: "Ed25519" });
    expect(
      await calculateJwkThumbprint({ kty: publicJwk.kty, crv: publicJwk.crv, x: publicJwk.x }),
    ).toBe(key?.kid);
    expect(JSON.parse(key?.privateJwk ?? "")).toHaveProperty("d");
  });

  it("reuses the stored key on a second start, so old tokens still verify", async () => {
    const { store, ring } = await freshRing();
    const token = await signGrantToken(sampleGrant(), ring, PARTIES);
    const restarted = await openKeyRing(store, { now: NOW + 60 });
    expect(restarted.signingKey().kid).toBe(ring.signingKey().kid);
    expect(await store.listKeys()).toHaveLength(1);
    expect(await verifyGrantToken(token, restarted, verifyAt(NOW + 60))).toMatchObject({
      ok: true,
    });
  });

  it("stores one signing key when two replicas start together, whatever their clocks", async () => {
    const store = await sqliteMemoryStore();
    const [a, b] = await Promise.all([
      openKeyRing(store, { now: NOW + 5 }),
      openKeyRing(store, { now: NOW }),
    ]);
    const stored = await store.listKeys();
    expect(stored).toHaveLength(1);
    expect(a.signingKey().kid).toBe(b.signingKey().kid);
    expect(a.signingKey().kid).toBe(stored[0]?.kid);
    const token = await signGrantToken(sampleGrant(), a, PARTIES);
    expect(await verifyGrantToken(token, b, verifyAt(NOW))).toMatchObject({ ok: true });
  });

  it("converges when another replica stores its key while this one is inserting: one key is stored", async () => {
    const store = spyKeyStore(await sqliteMemoryStore());
    let other: Awaited<ReturnType<typeof openKeyRing>> | undefined;
    store.beforeInsert = async () => {
      other = await openKeyRing(store, { now: NOW });
    };
    const ring = await openKeyRing(store, { now: NOW });
    const stored = await store.listKeys();
    expect(stored).toHaveLength(1);
    expect(other?.signingKey().kid).toBe(stored[0]?.kid);
    expect(ring.signingKey().kid).toBe(stored[0]?.kid);
  });

  it("agrees with a replica whose clock is ahead and that stored its key while this one was generating", async () => {
    // This ring listed an empty store at NOW; before it inserts, a replica at NOW + 5 opens and
    // stores its key. A plain insert would now sort this ring's older key first: this ring would
    // sign with its own key and the other with its own. The insert must not happen.
    const store = spyKeyStore(await sqliteMemoryStore());
    let ahead: Awaited<ReturnType<typeof openKeyRing>> | undefined;
    store.beforeInsert = async () => {
      ahead = await openKeyRing(store, { now: NOW + 5 });
    };
    const ring = await openKeyRing(store, { now: NOW });
    expect(await store.listKeys()).toHaveLength(1);
    expect(ring.signingKey().kid).toBe(ahead?.signingKey().kid);
    const token = await signGrantToken(sampleGrant(), ring, PARTIES);
    if (!ahead) throw new Error("the other replica did not open");
    expect(await verifyGrantToken(token, ahead, verifyAt(NOW))).toMatchObject({ ok: true });
  });

  it("fails when the store cannot answer", async () => {
    await expect(openKeyRing(await closedStore(), { now: NOW })).rejects.toSatisfy(
      (err) => isStoreError(err) && err.code === "UNAVAILABLE",
    );
  });

  it("refuses a stored key whose kid is not its thumbprint", async () => {
    const { store } = await freshRing();
    const [key] = await store.listKeys();
    if (!key) throw new Error("no key");
    const bad = await storeHolding({ ...key, kid: "not-the-thumbprint" });
    await expect(openKeyRing(bad, { now: NOW })).rejects.toSatisfy(
      (err) => isTokenError(err) && err.code === "KEY_INVALID" && /thumbprint/.test(err.message),
    );
  });

  it("refuses a stored key whose private half belongs to another key", async () => {
    const { store: first } = await freshRing();
    const { store: second } = await freshRing();
    const [a] = await first.listKeys();
    const [b] = await second.listKeys();
    if (!a || !b) throw new Error("no key");
    const bad = await storeHolding({ ...a, privateJwk: b.privateJwk });
    await expect(openKeyRing(bad, { now: NOW })).rejects.toSatisfy(
      (err) => isTokenError(err) && err.code === "KEY_INVALID",
    );
  });

  it("refuses a stored key that is not an Ed25519 JWK", async () => {
    const { store } = await freshRing();
    const [key] = await store.listKeys();
    if (!key) throw new Error("no key");
    for (const publicJwk of [
      "not json",
      "[]",
      JSON.stringify({ kty: "EC", crv: "P-256", x: "abc" }),
      JSON.stringify({ kty: "OKP", crv: "Ed25519", x: "short" }),
    ]) {
      const bad = await storeHolding({ ...key, publicJwk });
      await expect(openKeyRing(bad, { now: NOW })).rejects.toSatisfy(
        (err) => isTokenError(err) && err.code === "KEY_INVALID",
      );
    }
  });
});

describe("KeyRing.rotate()", () => {
  it("signs new tokens with a new kid and keeps old tokens valid", async () => {
    const { store, ring } = await freshRing();
    const oldKid = ring.signingKey().kid;
    const oldToken = await signGrantToken(sampleGrant(), ring, PARTIES);

    const newKid = await ring.rotate(NOW + 100);
    expect(newKid).not.toBe(oldKid);
    expect(ring.signingKey().kid).toBe(newKid);
    const newToken = await signGrantToken(
      sampleGrant({ id: "grant-2", rootId: "grant-2" }),
      ring,
      PARTIES,
    );
    expect(decodeProtectedHeader(newToken).kid).toBe(newKid);

    expect(await store.listKeys()).toMatchObject([
      { kid: oldKid, retiredAt: NOW + 100 },
      { kid: newKid, createdAt: NOW + 100 },
    ]);
    expect((await store.listKeys())[1]).not.toHaveProperty("retiredAt");
    expect(await verifyGrantToken(oldToken, ring, verifyAt(NOW + 200))).toMatchObject({ ok: true });
    expect(await verifyGrantToken(newToken, ring, verifyAt(NOW + 200))).toMatchObject({ ok: true });

    const restarted = await openKeyRing(store, { now: NOW + 300 });
    expect(restarted.signingKey().kid).toBe(newKid);
    expect(await verifyGrantToken(oldToken, restarted, verifyAt(NOW + 300))).toMatchObject({
      ok: true,
    });
    expect(restarted.jwks().keys.map((k) => k.kid)).toEqual([oldKid, newKid]);
  });
});

describe("KeyRing.rotate() on two replicas at once", () => {
  it("leaves one key that both sign with after a reload", async () => {
    const store = await sqliteMemoryStore();
    const a = await openKeyRing(store, { now: NOW });
    const b = await openKeyRing(store, { now: NOW });
    await Promise.all([a.rotate(NOW + 10), b.rotate(NOW + 10)]);
    await Promise.all([a.reload(), b.reload()]);
    const active = (await store.listKeys()).filter((k) => k.retiredAt === undefined);
    expect(active.length).toBeGreaterThanOrEqual(1);
    expect(a.signingKey().kid).toBe(active[0]?.kid);
    expect(b.signingKey().kid).toBe(active[0]?.kid);
  });
});

describe("KeyRing.jwks()", () => {
  it("publishes public members only, never a private one", async () => {
    const { store, ring } = await freshRing();
    await ring.rotate(NOW + 1);
    const jwks = ring.jwks();
    expect(jwks.keys).toHaveLength(2);
    for (const key of jwks.keys) {
      expect(Object.keys(key).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
      expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
    }
    const text = JSON.stringify(jwks);
    for (const stored of await store.listKeys()) {
      const { d } = JSON.parse(stored.privateJwk) as { d: string };
      expect(text).not.toContain(d);
    }
  });
});

describe("KeyRing.resolveKey()", () => {
  it("picks up a key another replica rotated in, when a token names it", async () => {
    const store = await sqliteMemoryStore();
    const a = await openKeyRing(store, { now: NOW });
    const b = await openKeyRing(store, { now: NOW });
    await b.rotate(NOW + 10);
    const token = await signGrantToken(sampleGrant(), b, PARTIES);
    expect(await verifyGrantToken(token, a, verifyAt(NOW + 60))).toMatchObject({ ok: true });
    expect(a.signingKey().kid).toBe(b.signingKey().kid);
  });

  it("reads the store at most once per interval for unknown kids", async () => {
    const store = spyKeyStore(await sqliteMemoryStore());
    const ring = await openKeyRing(store, { now: NOW, reloadIntervalSeconds: 30 });
    const reads = store.lists;
    expect(await ring.resolveKey("forged-1", NOW + 1)).toBeUndefined();
    expect(store.lists).toBe(reads);
    expect(await ring.resolveKey("forged-2", NOW + 30)).toBeUndefined();
    expect(store.lists).toBe(reads + 1);
    expect(await ring.resolveKey("forged-3", NOW + 45)).toBeUndefined();
    expect(store.lists).toBe(reads + 1);
    expect(await ring.resolveKey(ring.signingKey().kid, NOW + 46)).toBeDefined();
    expect(store.lists).toBe(reads + 1);
  });

  it("fails with KEY_INVALID (rather than refusing the token) when the reload meets a corrupt stored key", async () => {
    const { store, ring } = await freshRing();
    const [key] = await store.listKeys();
    if (!key) throw new Error("no key");
    await store.insertKey({
      ...key,
      kid: "corrupt-kid",
      publicJwk: "{not json",
      createdAt: NOW + 1,
    });
    const token = await forge(
      { alg: "EdDSA", kid: "corrupt-kid", typ: "charter-grant+jwt" },
      grantClaims(sampleGrant()),
      await strangerKey(),
    );
    await expect(verifyGrantToken(token, ring, verifyAt(NOW + 60))).rejects.toSatisfy(
      (err) => isTokenError(err) && err.code === "KEY_INVALID",
    );
    expect(
      await verifyGrantToken(
        await signGrantToken(sampleGrant(), ring, PARTIES),
        ring,
        verifyAt(NOW + 61),
      ),
    ).toMatchObject({ ok: true });
  });

  it("fails (rather than refusing the token) when the store cannot answer for an unknown kid", async () => {
    const real = await sqliteMemoryStore();
    const store = spyKeyStore(real);
    const a = await openKeyRing(store, { now: NOW });
    const b = await openKeyRing(await sqliteMemoryStore(), { now: NOW });
    const token = await signGrantToken(sampleGrant(), b, PARTIES);
    store.target = await closedStore();
    await expect(verifyGrantToken(token, a, verifyAt(NOW + 60))).rejects.toSatisfy(
      (err) => isStoreError(err) && err.code === "UNAVAILABLE",
    );
    store.target = real;
    expect(await verifyGrantToken(token, a, verifyAt(NOW + 120))).toMatchObject({
      ok: false,
      code: "GRANT_INVALID",
    });
  });
});
