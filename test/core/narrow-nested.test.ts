import { describe, expect, it } from "vitest";
import {
  buildCatalog,
  buildPolicy,
  compose,
  narrowSchema,
  projectCatalog,
} from "../../src/core/index.js";

describe("narrowSchema()", () => {
  it("intersects an enum inside array items instead of keeping the wider one", () => {
    const base = {
      type: "object",
      properties: {
        fields: { type: "array", items: { type: "string", enum: ["name", "company", "phone"] } },
      },
      additionalProperties: false,
    };
    const narrowed = narrowSchema(base, {
      constraints: [{ properties: { fields: { items: { enum: ["name", "company"] } } } }],
      binds: {},
      rules: [],
    });
    expect(JSON.stringify(narrowed)).not.toContain("phone");
  });

  it("hides forbidden item values from a projected catalog view", () => {
    const catalog = buildCatalog(
      {
        version: "v",
        actions: [
          {
            id: "contact.lookup",
            tool: {
              name: "lookup_contact",
              description: "Look someone up.",
              inputSchema: {
                type: "object",
                properties: {
                  query: { type: "string" },
                  fields: { type: "array", items: { type: "string", enum: ["name", "phone"] } },
                },
                required: ["query"],
                additionalProperties: false,
              },
            },
          },
        ],
      },
      "<inline>",
    );
    const policy = buildPolicy(
      {
        version: "p",
        sources: {
          s: {
            allow: ["contact.lookup"],
            constraints: {
              "contact.lookup": {
                schema: { properties: { fields: { items: { enum: ["name"] } } } },
              },
            },
          },
        },
        profiles: { p: { sources: ["s"] } },
      },
      catalog,
      "<inline>",
    );
    const result = compose(
      { profile: "p", subject: "a", owner: "o", purpose: "x" },
      policy,
      catalog,
      0,
      "g",
    );
    if (result.kind !== "granted") throw new Error("compose failed");
    expect(JSON.stringify(projectCatalog(result.grant, catalog))).not.toContain("phone");
  });
});
