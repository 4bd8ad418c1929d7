import { describe, expect, it } from "vitest";
import { buildCatalog, buildPolicy, type JsonObject } from "../../src/core/index.js";
import { loadErrorOf } from "../support/load-error.js";
import { catalogOf } from "../support/vectors.js";

const FILE = "catalogs/test.yaml";
const catalogWith = (...actions: unknown[]): JsonObject => ({
  version: "v1",
  actions: actions as JsonObject[],
});
const object = { type: "object", properties: { n: { type: "number" } } };

describe("buildCatalog() with agent and operation actions", () => {
  it("reads an agent's definition and an operation's kind and definition (by default its action id), with their own input schemas", () => {
    const catalog = buildCatalog(
      catalogWith(
        {
          id: "a.helper",
          kind: "agent",
          agent: { name: "helper", version: "3" },
          inputSchema: object,
        },
        { id: "op.wait", kind: "operation", operation: { kind: "signal" } },
        {
          id: "op.run",
          kind: "operation",
          operation: { kind: "activity", definition: "run-v2" },
          inputSchema: object,
          resource: "n/{n}",
        },
      ),
      FILE,
    );
    expect(catalog.actions.get("a.helper")).toMatchObject({
      agent: { name: "helper", version: "3" },
      inputSchema: object,
    });
    expect(catalog.actions.get("op.wait")).toMatchObject({
      operation: { kind: "signal", definition: "op.wait" },
    });
    expect(catalog.actions.get("op.run")?.input?.check({ n: "x" })).not.toEqual([]);
    expect(catalog.tools.size).toBe(0);
  });

  it.each([
    ["an unknown kind", { id: "x", kind: "robot" }, "kind must be one of tool, agent, operation"],
    [
      "an agent without a name",
      { id: "x", kind: "agent", agent: { version: "1" } },
      "an agent action needs `agent: {name, version?}`",
    ],
    [
      "an operation of a kind this version does not know",
      { id: "x", kind: "operation", operation: { kind: "teleport" } },
      "an operation action needs `operation: {kind, definition?}`",
    ],
    [
      "an operation key on a tool action",
      { id: "x", operation: { kind: "signal" } },
      "`operation` is only for actions of kind operation",
    ],
    [
      "an inputSchema beside a tool action's tool",
      { id: "x", inputSchema: object },
      "only agent and operation actions declare inputSchema",
    ],
    [
      "an operation input schema that is not an object schema",
      { id: "x", kind: "operation", operation: { kind: "job" }, inputSchema: { type: "string" } },
      "inputSchema must be an object schema",
    ],
  ])("refuses %s, naming the action", (_name, action, message) => {
    const err = loadErrorOf(() => buildCatalog(catalogWith(action), FILE));
    expect(err.problems).toEqual([
      expect.objectContaining({
        file: FILE,
        subject: "x",
        message: expect.stringContaining(message) as unknown,
      }),
    ]);
  });
});

describe("buildPolicy() operations by kind", () => {
  const catalog = catalogOf("targets");
  const policyWith = (operations: unknown) => ({
    version: "p",
    sources: { s: { operations } },
    profiles: { p: { sources: ["s"] } },
  });

  it("lists every operation action of the named kinds in the source's allow, approval and deny lists", () => {
    const source = buildPolicy(
      policyWith({ allow: ["signal", "activity"], approval: ["fork"], deny: ["job"] }),
      catalog,
      "p.yaml",
    ).sources.get("s");
    expect(source).toMatchObject({
      allow: ["refund.issue", "refund.await_confirmation"],
      approval: ["refund.review_branches"],
      deny: ["refund.export_job"],
    });
  });

  it("adds nothing for a kind no action of the catalog has", () => {
    expect(
      buildPolicy(policyWith({ allow: ["subgraph"] }), catalog, "p.yaml").sources.get("s")?.allow,
    ).toEqual([]);
  });

  it.each([
    [
      "a kind this version does not know",
      { allow: ["teleport"] },
      "must be a list of operation kinds",
    ],
    [
      "a list other than allow, approval and deny",
      { maybe: ["signal"] },
      "operations must be a map of allow, approval and deny",
    ],
  ])("refuses %s", (_name, operations, message) => {
    const err = loadErrorOf(() => buildPolicy(policyWith(operations), catalog, "p.yaml"));
    expect(err.message).toContain(message);
  });
});
