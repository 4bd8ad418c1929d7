import { describe, expect, it } from "vitest";
import {
  buildCatalog,
  buildPolicy,
  cloneJson,
  compose,
  decide,
  type JsonObject,
} from "../../src/core/index.js";
import { parseDocumentText } from "../../src/load/documents.js";
import { catalogOf } from "../support/vectors.js";

describe('cloneJson() and "__proto__" keys (YAML and JSON.parse both produce them as own keys)', () => {
  it("keeps an own __proto__ key as a key", () => {
    const copy = cloneJson(JSON.parse('{"__proto__": {"a": 1}, "b": 2}') as JsonObject);
    expect(Object.keys(copy)).toEqual(["__proto__", "b"]); // fails: ["b"], and the copy's prototype is {a: 1}
  });

  it("does not silently drop a policy bind on an argument named __proto__", () => {
    const catalog = catalogOf("basic");
    const doc = parseDocumentText(
      'version: p\nsources:\n  s:\n    allow: [audit.note]\n    constraints:\n      audit.note:\n        bind: { __proto__: "fixed", topic: "billing" }\nprofiles: { p: { sources: [s] } }\n',
      "p.yaml",
    );
    const policy = buildPolicy(doc, catalog, "p.yaml");
    const r = compose(
      { profile: "p", subject: "a", owner: "o", purpose: "x" },
      policy,
      catalog,
      1000,
      "g",
    );
    if (r.kind !== "granted") throw new Error("compose failed");
    const call = {
      callId: "c",
      actionId: "audit.note",
      arguments: JSON.parse('{"__proto__": "other", "topic": "billing"}') as unknown,
    };
    expect(decide(r.grant, catalog, call, { now: 1001 }).decision).toBe("deny"); // fails: "allow" (the bind vanished)
  });

  it("loads a tool schema that declares a property named __proto__", () => {
    const inputSchema = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"string","maxLength":3}},"additionalProperties":false}',
    ) as JsonObject;
    // fails: LoadError "schema is invalid: data/properties/type must be object,boolean, …"
    expect(() =>
      buildCatalog(
        {
          version: "v",
          actions: [{ id: "a", tool: { name: "t", description: "d", inputSchema } }],
        },
        "c.yaml",
      ),
    ).not.toThrow();
  });
});
