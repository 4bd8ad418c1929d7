import { describe, expect, it } from "vitest";
import { buildCatalog, type JsonObject } from "../../src/core/index.js";
import { loadErrorOf } from "../support/load-error.js";

function catalogWithAnnotations(annotations: unknown): JsonObject {
  return {
    version: "v1",
    actions: [
      {
        id: "web.search",
        tool: {
          name: "web_search",
          description: "Search.",
          inputSchema: { type: "object" },
          annotations: annotations as JsonObject,
        },
      },
    ],
  };
}

describe("buildCatalog() tool annotations", () => {
  it("keeps the MCP hints and title the catalog sets", () => {
    const catalog = buildCatalog(
      catalogWithAnnotations({ title: "Web search", openWorldHint: true, idempotentHint: true }),
      "c.yaml",
    );
    expect(catalog.tools.get("web_search")?.tool?.annotations).toEqual({
      title: "Web search",
      openWorldHint: true,
      idempotentHint: true,
    });
  });

  it.each([
    [{ openWorldHint: "yes" }, "tool annotation openWorldHint must be true or false"],
    [{ readonly: true }, 'unknown tool annotation "readonly"'],
    [{ title: "" }, "tool annotation title must be a non-empty string"],
    [[true], "tool annotations must be an object"],
  ])("refuses %j at load time", (annotations, message) => {
    const err = loadErrorOf(() => buildCatalog(catalogWithAnnotations(annotations), "c.yaml"));
    expect(err.message).toContain("web.search");
    expect(err.message).toContain(message);
  });
});
