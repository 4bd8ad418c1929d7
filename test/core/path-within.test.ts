import { describe, expect, it } from "vitest";
import { canonicalPathProblem, pathProblem, rootPattern } from "../../src/core/path-within.js";
import { createSchemaCompiler, formatProblems } from "../../src/core/schema.js";

describe("pathWithin", () => {
  it("accepts canonical paths at or under the root", () => {
    for (const p of ["/workspace", "/workspace/", "/workspace/a/b.txt", "/workspace/..a"])
      expect(pathProblem(p, "/workspace")).toBeUndefined();
    expect(pathProblem("/anything", "/")).toBeUndefined();
  });

  it("refuses what a tool could read as another path, never quoting the path", () => {
    for (const p of [
      "/workspace/..",
      "/workspace/%2e%2e",
      "/workspace\\x",
      "/workspace/\uff0e\uff0e",
      "/w\u0000",
      "workspace/a",
      "/workspace//a",
      "/workspace2",
    ]) {
      const problem = pathProblem(p, "/workspace");
      expect(problem, p).toBeDefined();
      expect(problem).not.toContain(p);
    }
  });

  it("is a schema keyword whose root must be canonical; typos stay compile errors", () => {
    const schemas = createSchemaCompiler();
    const c = schemas.compile({ type: "string", pathWithin: "/srv/data" });
    expect(c.check("/srv/data/x")).toEqual([]);
    expect(formatProblems(c.check("/srv/data/../x"))).toBe(
      '/: must be a canonical path within "/srv/data": it holds a . or .. segment',
    );
    expect(() => schemas.compile({ type: "string", pathWithin: "srv/data" })).toThrow(
      /is not an absolute path/,
    );
    expect(() => schemas.compile({ type: "string", pathWithin: "/srv/../etc" })).toThrow(/segment/);
    expect(() => schemas.compile({ type: "string", pathWitin: "/srv" })).toThrow(/unknown keyword/);
    expect(canonicalPathProblem("/a/b/")).toBeUndefined();
  });

  it("renders the root as a pattern for models", () => {
    expect(new RegExp(rootPattern("/work.space")).test("/work.space/a")).toBe(true);
    expect(new RegExp(rootPattern("/work.space")).test("/workXspace/a")).toBe(false);
    expect(new RegExp(rootPattern("/work.space")).test("/work.spacex")).toBe(false);
  });
});
