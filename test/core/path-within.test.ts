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

  it("refuses combining marks, default-ignorable code points and bidi controls anywhere", () => {
    for (const [p, why] of [
      ["/workspace/\u0301../etc", "combining mark"],
      ["/workspace/cafe\u0301", "combining mark"],
      ["/workspace/.\u200b./etc/passwd", "default-ignorable"],
      ["/workspace/.\u200c./etc", "default-ignorable"],
      ["/workspace/.\u200d./etc", "default-ignorable"],
      ["/workspace/.\ufeff./etc", "default-ignorable"],
      ["/workspace/..\u{e0041}/etc", "default-ignorable"],
      ["/workspace/..\u034f/etc", "combining mark"],
      ["/workspace/\u061c../etc", "bidi control"],
      ["/workspace/\u200e../etc", "bidi control"],
      ["/workspace/\u2069../etc", "bidi control"],
      ["/workspace/a\u009b", "control character"],
      ["/workspace/a\u2029", "line or paragraph separator"],
      ["/workspace/a\udc00", "lone surrogate"],
    ] as const) {
      const problem = pathProblem(p, "/workspace");
      expect(problem, JSON.stringify(p)).toContain(why);
      expect(problem).not.toContain(p);
    }
    for (const p of ["/workspace/café", "/workspace/Ωμέγα/東京", "/workspace/😀.txt"])
      expect(pathProblem(p, "/workspace"), p).toBeUndefined();
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
