import { describe, expect, it } from "vitest";
import {
  compose,
  delegate,
  grantShapeProblem,
  isTaskGrant,
  type ComposeRequest,
  type DelegationSpec,
  type TaskGrant,
} from "../../src/core/index.js";
import { signGrantToken, verifyGrantToken } from "../../src/token/index.js";
import { catalogOf, delegateAll, grantOf, policyOf, readVectors } from "../support/vectors.js";
import { freshRing, PARTIES, sampleGrant } from "../token/fixtures.js";

/** Every grant the golden vectors make compose and delegate produce. */
function vectorGrants(): [string, TaskGrant][] {
  const out: [string, TaskGrant][] = [];
  for (const v of readVectors("compose")) {
    const catalog = catalogOf(v.input["catalog"]);
    const policy = policyOf(
      v.input["policy"],
      v.input["policyCatalog"] === undefined ? catalog : catalogOf(v.input["policyCatalog"]),
    );
    const result = compose(
      v.input["request"] as ComposeRequest,
      policy,
      catalog,
      v.input["now"] as number,
      v.input["id"] as string,
    );
    if (result.kind === "granted") out.push([v.file, result.grant]);
  }
  for (const v of readVectors("delegate")) {
    const catalog = catalogOf(v.input["catalog"]);
    const policy =
      v.input["policy"] === undefined ? undefined : policyOf(v.input["policy"], catalog);
    const steps = v.input["delegations"] as { spec: DelegationSpec; now: number; id: string }[];
    const parent = delegateAll(
      grantOf(v.input["parent"], catalog, policy),
      steps.slice(0, -1),
      catalog,
    );
    const last = steps.at(-1);
    const result = last ? delegate(parent, last.spec, catalog, last.now, last.id) : undefined;
    if (result?.kind === "granted") out.push([v.file, result.grant]);
  }
  return out;
}

describe("grantShapeProblem()", () => {
  const grants = vectorGrants();

  it("finds grants in the golden vectors, root and delegated", () => {
    expect(grants.length).toBeGreaterThan(10);
    expect(grants.some(([, g]) => g.parentId !== null)).toBe(true);
  });

  // The token layer signs and verifies with this same check: every grant compose and delegate make passes both.
  it.each(grants)(
    "accepts the grant of %s, which survives a token round trip",
    async (_file, grant) => {
      expect(grantShapeProblem(grant)).toBeUndefined();
      const { ring } = await freshRing();
      const token = await signGrantToken(grant, ring, PARTIES);
      expect(await verifyGrantToken(token, ring, { ...PARTIES, now: grant.issuedAt })).toEqual({
        ok: true,
        grant,
      });
    },
  );

  it.each([
    ["not an object", [], /not an object/],
    ["an empty id", sampleGrant({ id: "" }), /grant\.id must be a non-empty string/],
    ["a parentId that is a number", sampleGrant({ parentId: 3 }), /grant\.parentId/],
    [
      "a chain that is not a list",
      sampleGrant({ chain: "grant-0" }),
      /grant\.chain must be a list of strings/,
    ],
    ["a negative issue time", sampleGrant({ issuedAt: -1 }), /grant\.issuedAt/],
    ["a string expiry", sampleGrant({ expiresAt: "tomorrow" }), /grant\.expiresAt/],
    [
      "limits with an unknown member",
      sampleGrant({ limits: { maxDelegationDepth: 0, maxCost: 3 } }),
      /grant\.limits must be an object of known limits/,
    ],
    ["limits without a depth", sampleGrant({ limits: { maxCalls: 3 } }), /maxDelegationDepth/],
    ["caveats that are a list", sampleGrant({ caveats: [] }), /grant\.caveats must be an object/],
    [
      "a constraint that is not a schema",
      sampleGrant({ caveats: { a: { constraints: [3], binds: {}, rules: [] } } }),
      /constraints/,
    ],
    [
      "binds that are a list",
      sampleGrant({ caveats: { a: { constraints: [], binds: [], rules: [] } } }),
      /binds/,
    ],
    [
      "a deny rule without a reason",
      sampleGrant({
        caveats: {
          a: { constraints: [], binds: {}, rules: [{ when: true, then: "deny", source: "s" }] },
        },
      }),
      /rules/,
    ],
    [
      "a rule with an extra member",
      sampleGrant({
        caveats: {
          a: {
            constraints: [],
            binds: {},
            rules: [{ when: true, then: "deny", reason: "r", source: "s", also: 1 }],
          },
        },
      }),
      /rules/,
    ],
    [
      "a root grant with a chain",
      sampleGrant({ chain: ["grant-0"] }),
      /root grant must have an empty chain/,
    ],
    ["a root grant that names another root", sampleGrant({ rootId: "grant-0" }), /own root/],
    [
      "a child whose chain does not end at its parent",
      sampleGrant({ id: "g-3", parentId: "g-2", chain: ["grant-1", "g-9"] }),
      /chain must run/,
    ],
    [
      "an unsorted allowed list",
      sampleGrant({ allowed: ["email.send", "email.read"] }),
      /grant\.allowed must be sorted and free of duplicates/,
    ],
    [
      "a list sorted by locale, not by code unit",
      sampleGrant({ denied: ["a.delete", "Z.delete"] }),
      /grant\.denied must be sorted/,
    ],
    [
      "a duplicate in approvalRequired",
      sampleGrant({ approvalRequired: ["payments.transfer", "payments.transfer"] }),
      /grant\.approvalRequired must be sorted and free of duplicates/,
    ],
    [
      "an id both allowed and denied",
      sampleGrant({ denied: ["email.send", "files.delete"] }),
      /grant\.allowed and grant\.denied must not share an action/,
    ],
    [
      "an id both allowed and approval-required",
      sampleGrant({ approvalRequired: ["email.read", "payments.transfer"] }),
      /grant\.allowed and grant\.approvalRequired must not share/,
    ],
    [
      "an id both approval-required and denied",
      sampleGrant({ denied: ["files.delete", "payments.transfer"] }),
      /grant\.approvalRequired and grant\.denied must not share/,
    ],
  ])("refuses %s", (_name, value, problem) => {
    expect(grantShapeProblem(value)).toMatch(problem);
    expect(isTaskGrant(value)).toBe(false);
  });

  it("refuses the overlapping grants of the decide vectors that show deny winning anyway", () => {
    const overlapping = readVectors("decide").filter((v) => v.file.includes("overlapping-lists"));
    expect(overlapping).toHaveLength(2);
    for (const v of overlapping)
      expect(grantShapeProblem(v.input["grant"])).toMatch(/must not share an action/);
  });

  it("accepts lists in code-unit order, where upper case sorts before lower case", () => {
    expect(grantShapeProblem(sampleGrant({ denied: ["Z.delete", "a.delete"] }))).toBeUndefined();
    expect(
      grantShapeProblem(sampleGrant({ allowed: [], approvalRequired: [], denied: [] })),
    ).toBeUndefined();
  });
});
