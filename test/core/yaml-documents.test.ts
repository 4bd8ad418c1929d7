import { describe, expect, it } from "vitest";
import { isLoadError } from "../../src/core/index.js";
import { parseDocumentText } from "../../src/load/documents.js";

function errorOf(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe("parseDocumentText() alias problems are load errors naming the file", () => {
  it("reports an unresolved alias as a LoadError", () => {
    const err = errorOf(() => parseDocumentText("a: &x [1]\nb: *y\n", "alias.yaml"));
    expect(isLoadError(err)).toBe(true); // fails: ReferenceError "Unresolved alias (the anchor must be set before the alias): y"
  });

  it("reports an alias bomb as a LoadError", () => {
    const text = [
      "a: &a [x,x,x,x,x,x,x,x,x,x]",
      "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]",
      "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]",
      "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]",
    ].join("\n");
    const err = errorOf(() => parseDocumentText(text, "bomb.yaml"));
    expect(isLoadError(err)).toBe(true); // fails: ReferenceError "Excessive alias count indicates a resource exhaustion attack"
    if (isLoadError(err)) expect(err.problems[0]?.file).toBe("bomb.yaml");
  });

  it("refuses values JSON cannot carry (.nan, .inf, !!binary, !!set)", () => {
    for (const text of ["a: .nan\n", "a: .inf\n", "a: !!binary aGVsbG8=\n", "a: !!set {x, y}\n"]) {
      expect(isLoadError(errorOf(() => parseDocumentText(text, "odd.yaml"))), text).toBe(true); // fails: NaN, Infinity, Buffer, Set
    }
  });
});
