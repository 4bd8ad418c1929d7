import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// Caches belong to the application context (`createAppContext`: `ctx.caches`). The only
// module-level caches left are the pure memo tables of a layer's `memo.ts` (keyed weakly by an
// immutable value, holding only a function of it), and the only module-level `let`s are the
// process-wide telemetry switches below. This test reads every source file's top-level
// statements and fails on any other module-level mutable state.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SRC = join(ROOT, "src");

/** Module-level `let`s allowed, with why they are not per context. */
const ALLOWED_LETS: Readonly<Record<string, readonly string[]>> = {
  // The process's one metrics recorder, read on the hot paths (installInstruments).
  "src/telemetry/instruments.ts": ["active", "timing"],
  // Mirrors OpenTelemetry's global tracer provider, process-wide by nature.
  "src/telemetry/tracing.ts": ["tracing"],
};

/** Classes whose instances are caches (`LruCache`) or can be filled (`WeakMap`…). */
const CACHE_CLASSES = /^(WeakMap|WeakSet|WeakRef|LruCache|FinalizationRegistry)$/;
const COLLECTION_CLASSES = /^(Map|Set)$/;

const isMemoHome = (file: string) => /^src\/[\w-]+\/memo\.ts$/.test(file);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? e.name === "gen"
        ? []
        : sourceFiles(join(dir, e.name))
      : e.name.endsWith(".ts")
        ? [join(dir, e.name)]
        : [],
  );
}

/**
 * The classes `node` instantiates when the module loads (outside any function or class body). A
 * memo factory such as the interop's `perEntry` makes its table inside its own body, in memo.ts.
 */
function eagerNews(node: ts.Node): string[] {
  const news: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isFunctionLike(n) || ts.isClassLike(n)) return;
    if (ts.isNewExpression(n)) news.push(n.expression.getText());
    ts.forEachChild(n, visit);
  };
  visit(node);
  return news;
}

/** Every module-level piece of mutable state in `text` that is not allowed where it is. */
function moduleStateProblems(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const problems: string[] = [];
  const at = (node: ts.Node) =>
    `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const checkClass = (cls: ts.ClassLikeDeclaration) => {
    for (const member of cls.members) {
      if (!ts.isPropertyDeclaration(member) || member.initializer === undefined) continue;
      if (!ts.getModifiers(member)?.some((m) => m.kind === ts.SyntaxKind.StaticKeyword)) continue;
      const news = eagerNews(member.initializer);
      if (news.some((c) => CACHE_CLASSES.test(c) || COLLECTION_CLASSES.test(c)))
        problems.push(
          `${at(member)} a static ${news.join(", ")} is state shared by every instance`,
        );
    }
  };
  for (const statement of source.statements) {
    if (ts.isClassDeclaration(statement)) checkClass(statement);
    if (!ts.isVariableStatement(statement)) continue;
    const isConst = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0;
    const exported =
      ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;
    for (const declaration of statement.declarationList.declarations) {
      const name = declaration.name.getText();
      if (!isConst) {
        if (!(ALLOWED_LETS[file] ?? []).includes(name))
          problems.push(`${at(declaration)} module-level \`let ${name}\``);
        continue;
      }
      if (declaration.initializer === undefined) continue;
      if (isMemoHome(file)) continue;
      for (const c of eagerNews(declaration.initializer)) {
        if (CACHE_CLASSES.test(c))
          problems.push(`${at(declaration)} module-level \`new ${c}\` (${name}) outside memo.ts`);
        else if (COLLECTION_CLASSES.test(c)) {
          const typed = declaration.type?.getText() ?? "";
          const mutated = new RegExp(`\\b${name}\\.(set|add|delete|clear)\\(`).test(text);
          if (mutated || (exported && !/^Readonly(Map|Set)</.test(typed)))
            problems.push(
              `${at(declaration)} module-level \`new ${c}\` (${name}) that ${mutated ? "is changed" : "is exported without a Readonly type"}`,
            );
        }
      }
    }
  }
  return problems;
}

describe("module-level state", () => {
  const files = sourceFiles(SRC).map((path) => relative(ROOT, path).split("\\").join("/"));

  it("holds no cache and no `let` outside the memo tables and the telemetry switches", () => {
    const problems = files.flatMap((file) =>
      moduleStateProblems(file, readFileSync(join(ROOT, file), "utf8")),
    );
    expect(problems).toEqual([]);
  });

  it("has a memo.ts only in the layers that document why theirs is safe", () => {
    const homes = files.filter(isMemoHome);
    expect(homes.sort()).toEqual(["src/core/memo.ts", "src/interop/memo.ts", "src/server/memo.ts"]);
    for (const home of homes)
      expect(readFileSync(join(ROOT, home), "utf8")).toMatch(/safe to share[\s/]+between/);
  });

  it.each([
    ["a WeakMap", "const seen = new WeakMap<object, string>();", /new WeakMap/],
    ["an LruCache", "export const cache = new LruCache<string, number>(10);", /new LruCache/],
    ["a WeakSet in an object", "const state = { refused: new WeakSet() };", /new WeakSet/],
    ["a Map it fills", "const byId = new Map<string, number>();\nbyId.set('a', 1);", /is changed/],
    ["an exported Set", "export const NAMES = new Set(['a']);", /without a Readonly type/],
    ["a let", "let installed = false;", /let installed/],
    ["a static Map", "class A { static known = new Map(); }", /static Map/],
  ])("refuses %s at module level", (_, text, problem) => {
    const problems = moduleStateProblems("src/authority/example.ts", text);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(problem);
  });

  it.each([
    ["a constant Set", "const KEYS = new Set(['a', 'b']);\nexport const has = (k) => KEYS.has(k);"],
    ["an exported ReadonlyMap", "export const BY: ReadonlyMap<string, number> = new Map();"],
    ["a Map made per call", "export function f() { const m = new Map(); m.set(1, 2); }"],
    ["a memo made by perEntry", "const tool = perEntry((t) => ({ name: t.name }));"],
  ])("allows %s", (_, text) => {
    expect(moduleStateProblems("src/authority/example.ts", text)).toEqual([]);
  });

  it("allows a memo table in a layer's memo.ts, and a let only where it is listed", () => {
    expect(moduleStateProblems("src/core/memo.ts", "export const pins = new WeakMap();")).toEqual(
      [],
    );
    expect(moduleStateProblems("src/telemetry/tracing.ts", "let tracing = false;")).toEqual([]);
    expect(moduleStateProblems("src/telemetry/tracing.ts", "let other = 0;")).toHaveLength(1);
  });
});
