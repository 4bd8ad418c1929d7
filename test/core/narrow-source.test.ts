import { describe, expect, it } from "vitest";
import { buildCatalog, buildPolicy, compose, isLoadError } from "../../src/core/index.js";

const tool = (name: string) => ({
  name,
  description: "d.",
  inputSchema: { type: "object", additionalProperties: false },
});
const catalog = buildCatalog(
  {
    version: "v",
    actions: [
      { id: "a", tool: tool("a") },
      { id: "pay", tool: tool("pay") },
    ],
  },
  "<inline>",
);

describe("narrow sources", () => {
  it("may not add approval-required actions: the policy is refused at load time", () => {
    const load = () =>
      buildPolicy(
        {
          version: "p",
          sources: { g: { allow: ["a"] }, n: { kind: "narrow", approval: ["pay"] } },
          profiles: { p: { sources: ["g", "n"] } },
        },
        catalog,
        "policy.yaml",
      );
    expect(load).toThrow(/policy\.yaml: source n: a narrow source only restricts/);
    try {
      load();
    } catch (err) {
      expect(isLoadError(err) && err.problems).toEqual([
        {
          file: "policy.yaml",
          subject: "source n",
          message:
            "a narrow source only restricts: list approval-required actions in a grant source",
        },
      ]);
    }
  });

  it("bounds the approval list of grant sources too", () => {
    const policy = buildPolicy(
      {
        version: "p",
        sources: { g: { allow: ["a"], approval: ["pay"] }, n: { kind: "narrow", allow: ["a"] } },
        profiles: { p: { sources: ["g", "n"] } },
      },
      catalog,
      "policy.yaml",
    );
    const result = compose(
      { profile: "p", subject: "s", owner: "o", purpose: "x" },
      policy,
      catalog,
      0,
      "g1",
    );
    expect(result).toMatchObject({
      kind: "granted",
      grant: { allowed: ["a"], approvalRequired: [] },
    });
  });
});
