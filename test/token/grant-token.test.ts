import {
  calculateJwkThumbprint,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  exportJWK,
  generateKeyPair,
  type CryptoKey,
} from "jose";
import { describe, expect, it } from "vitest";
import { StoreError } from "../../src/store/port.js";
import {
  createGrantVerifier,
  isTokenError,
  MAX_TOKEN_LENGTH,
  signGrantToken,
  signReceipt,
  TokenError,
  verifyGrantToken,
  type GrantTokenResult,
  type KeyResolver,
} from "../../src/token/index.js";
import {
  AUDIENCE,
  forge,
  freshRing,
  grantClaims,
  ISSUER,
  NOW,
  PARTIES,
  sampleGrant,
  segment,
  strangerKey,
} from "./fixtures.js";

const check = (now = NOW) => ({ ...PARTIES, now });

/** Asserts a refusal with this code and message, which must not contain any part of the token. */
function expectRefused(
  result: GrantTokenResult,
  code: "GRANT_INVALID" | "GRANT_EXPIRED",
  message: RegExp,
  token: string,
): void {
  expect(result).toMatchObject({ ok: false, code });
  if (result.ok) return;
  expect(result.message).toMatch(message);
  for (const part of token.split(".").filter((p) => p.length >= 8))
    expect(result.message).not.toContain(part);
}

describe("signGrantToken()", () => {
  it("writes the header and registered claims from the grant", async () => {
    const { ring } = await freshRing();
    const grant = sampleGrant();
    const token = await signGrantToken(grant, ring, PARTIES);
    expect(decodeProtectedHeader(token)).toEqual({
      alg: "EdDSA",
      kid: ring.signingKey().kid,
      typ: "charter-grant+jwt",
    });
    expect(decodeJwt(token)).toEqual(grantClaims(grant));
  });

  it("refuses to sign a malformed grant", async () => {
    const { ring } = await freshRing();
    const signing = signGrantToken(sampleGrant({ allowed: "email.send" }), ring, PARTIES);
    await expect(signing).rejects.toSatisfy(
      (err) =>
        isTokenError(err) && err.code === "INVALID_INPUT" && /grant\.allowed/.test(err.message),
    );
  });
});

describe("verifyGrantToken()", () => {
  it("answers the signed grant, equal field for field", async () => {
    const { ring } = await freshRing();
    const grant = sampleGrant();
    const result = await verifyGrantToken(
      await signGrantToken(grant, ring, PARTIES),
      ring,
      check(NOW + 10),
    );
    expect(result).toEqual({ ok: true, grant });
  });

  it("accepts a delegated grant", async () => {
    const { ring } = await freshRing();
    const child = sampleGrant({
      id: "grant-3",
      parentId: "grant-2",
      chain: ["grant-1", "grant-2"],
      caveats: {},
      limits: { maxDelegationDepth: 0 },
    });
    const result = await verifyGrantToken(
      await signGrantToken(child, ring, PARTIES),
      ring,
      check(),
    );
    expect(result).toEqual({ ok: true, grant: child });
  });

  describe("time window (the one decide applies: issuedAt <= now < expiresAt)", () => {
    it("is valid from issuedAt to one second before expiresAt", async () => {
      const { ring } = await freshRing();
      const grant = sampleGrant();
      const token = await signGrantToken(grant, ring, PARTIES);
      expect((await verifyGrantToken(token, ring, check(grant.issuedAt))).ok).toBe(true);
      expect((await verifyGrantToken(token, ring, check(grant.expiresAt - 1))).ok).toBe(true);
    });

    it("refuses an expired token with GRANT_EXPIRED", async () => {
      const { ring } = await freshRing();
      const grant = sampleGrant();
      const token = await signGrantToken(grant, ring, PARTIES);
      expectRefused(
        await verifyGrantToken(token, ring, check(grant.expiresAt)),
        "GRANT_EXPIRED",
        /has expired/,
        token,
      );
      expectRefused(
        await verifyGrantToken(token, ring, check(grant.expiresAt + 86_400)),
        "GRANT_EXPIRED",
        /has expired/,
        token,
      );
    });

    it("refuses a token that is not yet valid with GRANT_EXPIRED", async () => {
      const { ring } = await freshRing();
      const grant = sampleGrant();
      const token = await signGrantToken(grant, ring, PARTIES);
      expectRefused(
        await verifyGrantToken(token, ring, check(grant.issuedAt - 1)),
        "GRANT_EXPIRED",
        /not yet valid/,
        token,
      );
    });
  });

  describe("refuses every forgery with GRANT_INVALID", () => {
    it("a token signed by another key under the ring's kid", async () => {
      const { ring } = await freshRing();
      const token = await forge(
        { alg: "EdDSA", kid: ring.signingKey().kid, typ: "charter-grant+jwt" },
        grantClaims(sampleGrant()),
        await strangerKey(),
      );
      expectRefused(
        await verifyGrantToken(token, ring, check()),
        "GRANT_INVALID",
        /signature does not verify/,
        token,
      );
    });

    it("a token signed by another key under its own kid", async () => {
      const { ring } = await freshRing();
      const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
      const kid = await calculateJwkThumbprint(await exportJWK(publicKey));
      const token = await forge(
        { alg: "EdDSA", kid, typ: "charter-grant+jwt" },
        grantClaims(sampleGrant()),
        privateKey,
      );
      expectRefused(
        await verifyGrantToken(token, ring, check()),
        "GRANT_INVALID",
        /not signed by a known key/,
        token,
      );
    });

    it("a token without a kid", async () => {
      const { ring } = await freshRing();
      const token = await forge(
        { alg: "EdDSA", typ: "charter-grant+jwt" },
        grantClaims(sampleGrant()),
        ring.signingKey().privateKey,
      );
      expectRefused(
        await verifyGrantToken(token, ring, check()),
        "GRANT_INVALID",
        /not signed by a known key/,
        token,
      );
    });

    it('an unsigned token (alg "none")', async () => {
      const { ring } = await freshRing();
      const header = { alg: "none", kid: ring.signingKey().kid, typ: "charter-grant+jwt" };
      for (const token of [
        `${segment(header)}.${segment(grantClaims(sampleGrant()))}.`,
        `${segment(header)}.${segment(grantClaims(sampleGrant()))}.AAAA`,
      ]) {
        expectRefused(
          await verifyGrantToken(token, ring, check()),
          "GRANT_INVALID",
          /algorithm is not allowed/,
          token,
        );
      }
    });

    it("an HS256 token whose HMAC secret is the public key", async () => {
      const { ring } = await freshRing();
      const jwk = ring.jwks().keys[0];
      if (!jwk) throw new Error("no key");
      const secrets = [
        Buffer.from(jwk.x, "base64url"),
        Buffer.from(JSON.stringify(jwk)),
        Buffer.from(jwk.x),
      ];
      for (const secret of secrets) {
        const token = await forge(
          { alg: "HS256", kid: jwk.kid, typ: "charter-grant+jwt" },
          grantClaims(sampleGrant()),
          new Uint8Array(secret),
        );
        expectRefused(
          await verifyGrantToken(token, ring, check()),
          "GRANT_INVALID",
          /algorithm is not allowed/,
          token,
        );
      }
    });

    it("a token of another typ, or of none", async () => {
      const { ring } = await freshRing();
      const { kid, privateKey } = ring.signingKey();
      for (const typ of ["JWT", "charter-receipt+jwt", "at+jwt", undefined]) {
        const header = typ === undefined ? { alg: "EdDSA", kid } : { alg: "EdDSA", kid, typ };
        const token = await forge(header, grantClaims(sampleGrant()), privateKey);
        expectRefused(
          await verifyGrantToken(token, ring, check()),
          "GRANT_INVALID",
          /not a grant token \(wrong typ\)/,
          token,
        );
      }
    });

    it("a receipt presented as a grant token", async () => {
      const { ring } = await freshRing();
      const receipt = await signReceipt(
        {
          decisionId: "d-1",
          grantId: "grant-1",
          subject: "agent-7",
          actionId: "email.send",
          toolName: "send_email",
          callId: "c-1",
          argsDigest: "sha256:ab",
          argumentsDigest: "cd",
          catalogVersion: "1",
        },
        ring,
        { ...PARTIES, now: NOW },
      );
      expectRefused(
        await verifyGrantToken(receipt, ring, check()),
        "GRANT_INVALID",
        /wrong typ/,
        receipt,
      );
    });

    it("a token from another issuer", async () => {
      const { ring } = await freshRing();
      const token = await signGrantToken(sampleGrant(), ring, {
        issuer: "https://evil.test",
        audience: AUDIENCE,
      });
      expectRefused(
        await verifyGrantToken(token, ring, check()),
        "GRANT_INVALID",
        /another issuer/,
        token,
      );
    });

    it("a token for another audience", async () => {
      const { ring } = await freshRing();
      const token = await signGrantToken(sampleGrant(), ring, {
        issuer: ISSUER,
        audience: "someone-else",
      });
      expectRefused(
        await verifyGrantToken(token, ring, check()),
        "GRANT_INVALID",
        /another audience/,
        token,
      );
    });

    it("a token whose payload was tampered with", async () => {
      const { ring } = await freshRing();
      const token = await signGrantToken(sampleGrant(), ring, PARTIES);
      const [header, payload, signature] = token.split(".") as [string, string, string];
      for (const at of [0, Math.floor(payload.length / 2), payload.length - 2]) {
        const flipped = payload[at] === "A" ? "B" : "A";
        const tampered = `${header}.${payload.slice(0, at)}${flipped}${payload.slice(at + 1)}.${signature}`;
        expect(tampered).not.toBe(token);
        expectRefused(
          await verifyGrantToken(tampered, ring, check()),
          "GRANT_INVALID",
          /signature does not verify/,
          tampered,
        );
      }
    });

    it("a token whose claims were rewritten (a wider grant) under the old signature", async () => {
      const { ring } = await freshRing();
      const token = await signGrantToken(sampleGrant(), ring, PARTIES);
      const [header, , signature] = token.split(".") as [string, string, string];
      const wider = sampleGrant({
        allowed: ["email.read", "email.send", "files.delete"],
        denied: [],
      });
      const tampered = `${header}.${segment(grantClaims(wider))}.${signature}`;
      expectRefused(
        await verifyGrantToken(tampered, ring, check()),
        "GRANT_INVALID",
        /signature does not verify/,
        tampered,
      );
    });

    it("garbage, empty and oversized input", async () => {
      const { ring } = await freshRing();
      const cases: [string, RegExp][] = [
        ["", /no grant token was presented/],
        ["garbage", /malformed/],
        ["a.b.c", /malformed/],
        ["..", /malformed/],
        ["....", /malformed/],
        [
          `${segment({ alg: "EdDSA" })}.${segment("not an object")}.AAAA`,
          /not signed by a known key/,
        ],
        [`${segment({ alg: "EdDSA", kid: ring.signingKey().kid })}.!!!.###`, /malformed/],
        [JSON.stringify(grantClaims(sampleGrant())), /malformed/],
        ["x".repeat(MAX_TOKEN_LENGTH + 1), /too large/],
      ];
      const kid = ring.signingKey().kid;
      const body = segment(grantClaims(sampleGrant()));
      const headers: [string, unknown, RegExp][] = [
        ["a header that is not JSON", "{not json", /malformed/],
        ["a header that is a list", [1], /malformed/],
        [
          "an unknown crit extension",
          { alg: "EdDSA", kid, typ: "charter-grant+jwt", crit: ["x"], x: 1 },
          /malformed/,
        ],
        [
          "an empty crit list",
          { alg: "EdDSA", kid, typ: "charter-grant+jwt", crit: [] },
          /malformed/,
        ],
        [
          "an unencoded payload (b64 false)",
          { alg: "EdDSA", kid, typ: "charter-grant+jwt", crit: ["b64"], b64: false },
          /signature does not verify/,
        ],
        [
          "b64 false without crit",
          { alg: "EdDSA", kid, typ: "charter-grant+jwt", b64: false },
          /signature does not verify/,
        ],
        ["no alg", { kid, typ: "charter-grant+jwt" }, /malformed/],
      ];
      for (const [, header, message] of headers) {
        const h =
          typeof header === "string" ? Buffer.from(header).toString("base64url") : segment(header);
        cases.push([`${h}.${body}.${"A".repeat(86)}`, message]);
      }
      cases.push(
        [`${segment({ alg: "EdDSA", kid })}.${body}`, /malformed/],
        [`${segment({ alg: "EdDSA", kid })}.${body}.AAAA.AAAA.AAAA`, /malformed/],
      );
      for (const [token, message] of cases)
        expectRefused(
          await verifyGrantToken(token, ring, check()),
          "GRANT_INVALID",
          message,
          token,
        );
      const notAString = await verifyGrantToken(null as unknown as string, ring, check());
      expect(notAString).toMatchObject({ ok: false, code: "GRANT_INVALID" });
    });

    it("a properly signed token with a payload that is not a JSON object", async () => {
      const { ring } = await freshRing();
      const { kid, privateKey } = ring.signingKey();
      const { CompactSign } = await import("jose");
      const token = await new CompactSign(new TextEncoder().encode("[1,2,3]"))
        .setProtectedHeader({ alg: "EdDSA", kid, typ: "charter-grant+jwt" })
        .sign(privateKey);
      expectRefused(
        await verifyGrantToken(token, ring, check()),
        "GRANT_INVALID",
        /malformed/,
        token,
      );
    });
  });

  describe("refuses a token signed with the real key whose claims are inconsistent", () => {
    const header = async () => {
      const { ring } = await freshRing();
      const { kid, privateKey } = ring.signingKey();
      return {
        ring,
        sign: (payload: Record<string, unknown>) =>
          forge({ alg: "EdDSA", kid, typ: "charter-grant+jwt" }, payload, privateKey),
      };
    };

    it.each([
      [
        "a grant claim that is a string",
        { grant: "grant-1" },
        /malformed grant: the grant is not an object/,
      ],
      ["no grant claim", { grant: undefined }, /lacks a claim/],
      [
        "a grant with a list that is not of strings",
        { grant: { ...sampleGrant(), allowed: ["a", 1] } },
        /grant\.allowed must be a list of strings/,
      ],
      [
        "a grant with a missing field",
        { grant: { ...sampleGrant(), owner: undefined } },
        /grant\.owner must be a string/,
      ],
      [
        "a grant with an unknown member",
        { grant: { ...sampleGrant(), maxCost: 5 } },
        /member this version does not know/,
      ],
      [
        "a grant with a fractional expiry",
        { grant: { ...sampleGrant(), expiresAt: NOW + 0.5 }, exp: NOW + 0.5 },
        /grant\.expiresAt must be a non-negative integer/,
      ],
      ["a grant with an unknown mode", { grant: { ...sampleGrant(), mode: "god" } }, /grant\.mode/],
      [
        "a grant with a negative limit",
        { grant: { ...sampleGrant(), limits: { maxCalls: -1, maxDelegationDepth: 0 } } },
        /grant\.limits\.maxCalls/,
      ],
      [
        "a grant with a malformed rule",
        {
          grant: {
            ...sampleGrant(),
            caveats: {
              x: {
                constraints: [],
                binds: {},
                rules: [{ when: true, then: "allow", source: "s" }],
              },
            },
          },
        },
        /rules/,
      ],
      ["a jti that is not the grant's id", { jti: "grant-2" }, /jti is not its grant's id/],
      [
        "a sub that is not the grant's subject",
        { sub: "agent-8" },
        /sub is not its grant's subject/,
      ],
      [
        "an exp that is not the grant's expiry",
        { exp: NOW + 7200 },
        /exp is not its grant's expiry/,
      ],
      ["an nbf that is not the grant's issue time", { nbf: NOW - 100 }, /nbf and iat/],
      ["a missing jti", { jti: undefined }, /lacks a "jti" claim/],
      ["a missing exp", { exp: undefined }, /lacks a "exp" claim/],
    ])("%s", async (_name, change, message) => {
      const { ring, sign } = await header();
      const claims = Object.fromEntries(
        Object.entries({ ...grantClaims(sampleGrant()), ...change }).filter(
          ([, v]) => v !== undefined,
        ),
      );
      const token = await sign(claims);
      expectRefused(await verifyGrantToken(token, ring, check()), "GRANT_INVALID", message, token);
    });
  });

  describe("fails, rather than refusing the token, when it could not check it", () => {
    const resolverThrowing = (err: Error): KeyResolver => ({
      resolveKey: () => Promise.reject(err),
    });

    it("rejects with the TokenError a key resolver met (a corrupt stored key), not with GRANT_INVALID", async () => {
      const { ring } = await freshRing();
      const token = await signGrantToken(sampleGrant(), ring, PARTIES);
      const corrupt = new TokenError(
        "KEY_INVALID",
        "stored key k-1 is unusable: its public JWK is not JSON",
      );
      await expect(verifyGrantToken(token, resolverThrowing(corrupt), check())).rejects.toBe(
        corrupt,
      );
    });

    it("rejects with the StoreError a key resolver met", async () => {
      const { ring } = await freshRing();
      const token = await signGrantToken(sampleGrant(), ring, PARTIES);
      const down = new StoreError(
        "UNAVAILABLE",
        "sqlite store could not list keys: the store is closed",
      );
      await expect(verifyGrantToken(token, resolverThrowing(down), check())).rejects.toBe(down);
    });

    it("rejects when a resolver answers something that is not a key (a bug), and for any other error", async () => {
      const { ring } = await freshRing();
      const token = await signGrantToken(sampleGrant(), ring, PARTIES);
      const notAKey: KeyResolver = { resolveKey: () => Promise.resolve({} as CryptoKey) };
      await expect(verifyGrantToken(token, notAKey, check())).rejects.toBeInstanceOf(TypeError);
      await expect(
        verifyGrantToken(token, resolverThrowing(new RangeError("boom")), check()),
      ).rejects.toThrow("boom");
    });

    it("rejects with a jose error that is about a key, not about the token", async () => {
      const { ring } = await freshRing();
      const token = await signGrantToken(sampleGrant(), ring, PARTIES);
      await expect(
        verifyGrantToken(token, resolverThrowing(new errors.JWKInvalid("bad key")), check()),
      ).rejects.toBeInstanceOf(errors.JWKInvalid);
    });

    it("does not cache or count a failure as a refusal in the verifier", async () => {
      const { ring } = await freshRing();
      const token = await signGrantToken(sampleGrant(), ring, PARTIES);
      const corrupt = new TokenError("KEY_INVALID", "stored key k-1 is unusable");
      const verifier = createGrantVerifier(resolverThrowing(corrupt), PARTIES);
      await expect(verifier.verify(token, NOW)).rejects.toBe(corrupt);
      expect(verifier.stats().size).toBe(0);
    });
  });
});
