/**
 * The Authorize hot path, measured against baselines taken in the same run (these machines are
 * noisy: read the ratios vitest prints, never the absolute times).
 *
 *   npm run bench
 */
import { join } from "node:path";
import { afterAll, beforeAll, bench, describe } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createAppContext, type AppContext } from "../src/app/context.js";
import { DEFAULTS } from "../src/config/config.js";
import { decide } from "../src/core/decide.js";
import { compose } from "../src/core/compose.js";
import type { TaskGrant } from "../src/core/grant.js";
import type { PolicySet } from "../src/authority/index.js";
import { createGrantVerifier, signGrantToken, type GrantVerifier } from "../src/token/index.js";
import { FIXTURES, startTestCharter, type TestCharter } from "../test/support/charter-server.js";

const NOW = Math.floor(Date.now() / 1000);
const parties = { issuer: "bench", audience: "bench" };
const refundArgs = { order_id: "ord_A1B2C3", amount: 40, currency: "EUR", reason: "damaged" };

let authority: PolicySet;
let grant: TaskGrant;
let token: string;
let app: AppContext;
const dataDir = mkdtempSync(join(tmpdir(), "charter-bench-"));
let cached: GrantVerifier;
let uncached: GrantVerifier;
let charter: TestCharter;
let serverToken: string;

beforeAll(async () => {
  app = await createAppContext(
    {
      ...DEFAULTS,
      dataDir,
      catalog: join(FIXTURES, "catalog.yaml"),
      policy: join(FIXTURES, "policy.yaml"),
    },
    { now: () => NOW },
  );
  authority = app.policySet();
  const composed = compose(
    { profile: "owner-assistant", subject: "agent:bench", owner: "ana", purpose: "bench" },
    authority.policy,
    authority.catalog,
    NOW,
    "grt_bench",
  );
  if (composed.kind !== "granted") throw new Error("the demo policy must compose owner-assistant");
  grant = composed.grant;
  const ring = app.ring;
  token = await signGrantToken(grant, ring, parties);
  cached = createGrantVerifier(ring, { ...parties, maxEntries: 100 });
  uncached = createGrantVerifier(ring, { ...parties, maxEntries: 0 });
  charter = await startTestCharter();
  serverToken = (
    await charter.clients.grants.issueGrant({
      profile: "owner-assistant",
      subject: "agent:bench",
      owner: "ana",
      purpose: "bench",
    })
  ).grantToken;
});

afterAll(async () => {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
  await charter.stop();
});

describe("grant token verification: the cache against a full signature check", () => {
  bench("verify, signature checked every time (baseline)", async () => {
    await uncached.verify(token, NOW);
  });
  bench("verify, cached", async () => {
    await cached.verify(token, NOW);
  });
});

describe("the pure decision against schema validation alone", () => {
  const input = () => authority.catalog.tools.get("issue_refund")?.input;
  bench("validate the arguments against the tool schema (baseline)", () => {
    input()?.check(refundArgs);
  });
  bench("decide(): all checks, digest included", () => {
    decide(
      grant,
      authority.catalog,
      { callId: "c", toolName: "issue_refund", arguments: refundArgs },
      { now: NOW },
    );
  });
});

describe("a gRPC round trip: Authorize against an almost empty RPC", () => {
  bench("GetJwks round trip (baseline)", async () => {
    await charter.clients.keys.getJwks({});
  });
  bench("Authorize round trip (cached token, allow with a signed receipt)", async () => {
    await charter.clients.authority.authorize({
      grantToken: serverToken,
      call: { callId: "c", toolName: "issue_refund", argumentsJson: JSON.stringify(refundArgs) },
    });
  });
});
