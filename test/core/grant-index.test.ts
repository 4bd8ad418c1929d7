import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  assess,
  assessInForce,
  buildPolicy,
  compose,
  decide,
  decideInForce,
  grantIndex,
  withCallDigest,
  withdrawal,
  withdrawnBy,
  type ComposeRequest,
  type Policy,
  type TaskGrant,
} from "../../src/core/index.js";
import {
  approvalRecordArb,
  basicCallArb,
  BASIC_IDS,
  CAVEAT_POLICY,
  caveatPolicyOf,
  composeRequestArb,
} from "../support/arbitraries.js";
import { catalogOf } from "../support/vectors.js";

const NOW = 1_800_000_000;
const catalog = catalogOf("basic");
const policy = caveatPolicyOf(catalog);
const PROFILES = [...policy.profiles.keys()];

/** The caveat policy as an operator might change it later: a source suspended, new denies (global and own). */
const tightened: Policy = buildPolicy(
  {
    ...CAVEAT_POLICY,
    version: "caveat-policy-2",
    sources: {
      ...(CAVEAT_POLICY["sources"] as object),
      "org-deny": { global: true, deny: ["shell.exec", "email.send"] },
      "late-deny": { global: true, deny: ["files.read", "email.send"] },
      "off-deny": { global: true, status: "suspended", deny: ["email.read"] },
      careful: {
        approval: ["email.send"],
        deny: ["refund.issue"],
        limits: { maxDelegationDepth: 1 },
      },
    },
  },
  catalog,
  "tightened.yaml",
);

const GRANT = compose(
  { profile: "team", subject: "agent:a", owner: "user:o", purpose: "p" },
  policy,
  catalog,
  NOW,
  "g-plain",
);
if (GRANT.kind !== "granted") throw new Error("team must compose");

function composed(request: ComposeRequest): TaskGrant | undefined {
  const result = compose(request, policy, catalog, NOW, "g-index");
  return result.kind === "granted" ? result.grant : undefined;
}

function deepFrozen<T>(value: T): T {
  const copy = structuredClone(value);
  const freeze = (v: unknown): void => {
    if (typeof v === "object" && v !== null) {
      Object.freeze(v);
      Object.values(v).forEach(freeze);
    }
  };
  freeze(copy);
  return copy;
}

describe("grantIndex()", () => {
  it("is built once for a frozen grant and afresh for one that could still change", () => {
    const grant = composed({ profile: "team", subject: "agent:a", owner: "user:o", purpose: "p" });
    if (!grant) throw new Error("team must compose");
    const frozen = deepFrozen(grant);
    expect(grantIndex(frozen)).toBe(grantIndex(frozen));
    expect(grantIndex(grant)).not.toBe(grantIndex(grant));
    for (const id of BASIC_IDS)
      expect(grantIndex(frozen).allowed.has(id)).toBe(grant.allowed.includes(id));
  });

  it("answers membership exactly, for sorted lists (binary search) and for lists in any other order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "binary", maxLength: 4 }), { maxLength: 40 }),
        fc.boolean(),
        fc.string({ unit: "binary", maxLength: 4 }),
        (list, sort, probe) => {
          const ids = sort ? [...new Set(list)].sort() : list;
          const grant = deepFrozen({ ...GRANT.grant, allowed: ids });
          for (const id of [...ids, probe])
            expect(grantIndex(grant).allowed.has(id)).toBe(ids.includes(id));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("gives decide the same verdicts as the grant's lists, frozen (indexed once) or not", () => {
    fc.assert(
      fc.property(
        composeRequestArb(PROFILES),
        basicCallArb,
        fc.option(approvalRecordArb, { nil: undefined }),
        (request, call, approval) => {
          const grant = composed(request);
          fc.pre(grant !== undefined);
          const g = grant;
          const ctx = { now: NOW + 1, ...(approval ? { approval } : {}) };
          const plain = decide(g, catalog, call, ctx);
          expect(decide(deepFrozen(g), catalog, call, ctx)).toEqual(plain);
          expect(withCallDigest(assess(deepFrozen(g), catalog, call, ctx))).toEqual(plain);
          for (const p of [policy, tightened]) {
            const inForce = decideInForce(g, catalog, p, call, ctx);
            expect(withCallDigest(assessInForce(deepFrozen(g), catalog, p, call, ctx))).toEqual(
              inForce,
            );
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe("withdrawnBy()", () => {
  it("names the source withdrawal() names, for every action", () => {
    fc.assert(
      fc.property(composeRequestArb(PROFILES), (request) => {
        const grant = composed(request);
        fc.pre(grant !== undefined);
        for (const p of [policy, tightened]) {
          const whole = withdrawal(grant, p);
          for (const id of [...BASIC_IDS, "ghost.id"])
            expect(withdrawnBy(grant, p, id)).toBe(whole.actions.get(id));
        }
      }),
      { numRuns: 200 },
    );
  });
});
