/**
 * Verifies N distinct grant tokens (each of ~27 KB: 500 action ids, caveats on every fifth)
 * through one verifier with a byte budget and prints the heap growth after a full GC with what
 * the verifier counts. Run as an ES module in a child `node --expose-gc` (TOKEN_MODULE: the built
 * dist/token/index.js; HEAP_COUNT, HEAP_BUDGET, HEAP_IDS; HEAP_UNIQUE=1 gives every grant caveats
 * of its own, so nothing of them can be shared).
 */
export const TOKEN_CACHE_HEAP_SCRIPT = String.raw`
const env = process.env;
const { createGrantVerifier, signGrantToken } = await import(env.TOKEN_MODULE);
const { generateKeyPair } = await import("jose");
const n = Number(env.HEAP_COUNT);
const ids = Number(env.HEAP_IDS ?? 500);
const budget = Number(env.HEAP_BUDGET);
const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
const ring = { signingKey: () => ({ kid: "k1", privateKey }), resolveKey: async (kid) => (kid === "k1" ? publicKey : undefined) };
const parties = { issuer: "heap", audience: "heap" };
const NOW = 1_750_000_000;
const allowed = Array.from({ length: ids }, (_, i) => "gen.action_" + String(i).padStart(5, "0"));
const caveats = (g) => Object.fromEntries(
  allowed.filter((_, i) => i % 5 === 0).map((id) => [id, { constraints: [{ properties: { amount: { maximum: env.HEAP_UNIQUE === "1" ? 5000 + g : 5000 } } }], binds: {}, rules: [] }]),
);
const grant = (g) => ({
  id: "grt_" + g, rootId: "grt_" + g, parentId: null, chain: [], subject: "agent:heap", owner: "user:heap", purpose: "heap", profile: "heap",
  issuedAt: NOW, expiresAt: NOW + 3600, catalogVersion: "heap-1", allowed, approvalRequired: [], denied: [], caveats: caveats(g),
  limits: { maxDelegationDepth: 0 }, mode: "live", sources: ["heap"],
});
const tokens = [];
for (let g = 0; g < n; g++) tokens.push(await signGrantToken(grant(g), ring, parties));
const verifier = createGrantVerifier(ring, { ...parties, maxEntries: n, maxBytes: budget });
globalThis.gc();
globalThis.gc();
const before = process.memoryUsage().heapUsed;
let refused = 0;
for (const t of tokens) if (!(await verifier.verify(t, NOW + 1)).ok) refused += 1;
globalThis.gc();
globalThis.gc();
const after = process.memoryUsage().heapUsed;
const { size, bytes } = verifier.stats();
console.log(JSON.stringify({ n, tokenLength: tokens[0].length, growthBytes: after - before, size, bytes, refused }));
`;
