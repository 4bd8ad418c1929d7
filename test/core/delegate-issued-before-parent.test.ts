import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compose, decide, delegate, type TaskGrant } from "../../src/core/index.js";
import { basicCallArb, specFromPlan, specPlanArb } from "../support/arbitraries.js";
import { catalogOf, policyOf } from "../support/vectors.js";

const catalog = catalogOf("basic");
const policy = policyOf("basic", catalog);
const ISSUED = 1_800_000_000;

function root(): TaskGrant {
  const r = compose(
    { profile: "assistant", subject: "a", owner: "o", purpose: "p" },
    policy,
    catalog,
    ISSUED,
    "g-root",
  );
  if (r.kind !== "granted") throw new Error("compose failed");
  return r.grant;
}

describe("delegate() before the parent's issuance", () => {
  it("does not give the child a validity window that starts before its parent's", () => {
    const parent = root();
    const result = delegate(
      parent,
      { subject: "child", allowed: ["email.read"] },
      catalog,
      ISSUED - 500,
      "g-child",
    );
    // Either refuse (EXPIRY_WIDENS: the window would widen) or clamp issuedAt to the parent's.
    if (result.kind === "granted")
      expect(result.grant.issuedAt).toBeGreaterThanOrEqual(parent.issuedAt);
    else expect(result.code).toBe("EXPIRY_WIDENS");
  });

  it("never lets the child allow a call the parent denies as not yet valid", () => {
    const parent = root();
    const result = delegate(
      parent,
      { subject: "child", allowed: ["email.read"] },
      catalog,
      ISSUED - 500,
      "g-child",
    );
    if (result.kind !== "granted") return;
    const call = { callId: "c", toolName: "read_email", arguments: { folder: "inbox" } };
    const now = ISSUED - 100;
    expect(decide(parent, catalog, call, { now })).toMatchObject({
      decision: "deny",
      reason: { code: "GRANT_EXPIRED" },
    });
    expect(decide(result.grant, catalog, call, { now }).decision).toBe("deny"); // fails: "allow"
  });

  it("holds as a property when delegation times may precede the parent's issuance", () => {
    fc.assert(
      fc.property(
        specPlanArb,
        fc.integer({ min: -600, max: 600 }),
        fc.array(basicCallArb, { minLength: 1, maxLength: 4 }),
        (plan, offset, calls) => {
          const parent = root();
          const result = delegate(
            parent,
            specFromPlan(plan, parent, catalog),
            catalog,
            ISSUED + offset,
            "g-child",
          );
          if (result.kind !== "granted") return;
          for (const call of calls) {
            for (const now of [ISSUED - 601, ISSUED + offset, ISSUED - 1, ISSUED]) {
              if (decide(parent, catalog, call, { now }).decision === "deny")
                expect(decide(result.grant, catalog, call, { now }).decision).toBe("deny");
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
