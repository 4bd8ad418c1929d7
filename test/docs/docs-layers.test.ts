import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { firstTable, parseMarkdown, section, setDiff } from "./markdown.js";

// docs/architecture.md "## Layers" holds a pipe table: first column `src/<layer>`, and a column
// headed "imports from" listing the `src/<layer>`s it may import, or "—" for none.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SRC = join(ROOT, "src");

function documentedLayers(): Map<string, Set<string>> {
  const doc = parseMarkdown(
    "docs/architecture.md",
    readFileSync(join(ROOT, "docs", "architecture.md"), "utf8"),
  );
  const table = firstTable(section(doc, 2, "Layers"));
  const importsColumn = table.header.findIndex((h) => h.toLowerCase() === "imports from");
  if (importsColumn < 0)
    throw new Error('docs/architecture.md "## Layers": no "imports from" column');
  const layers = new Map<string, Set<string>>();
  for (const row of table.rows) {
    const layer = /^`src\/([\w-]+)`$/.exec(row[0] ?? "")?.[1];
    if (layer === undefined)
      throw new Error(
        `docs/architecture.md "## Layers": first cell "${row[0] ?? ""}" is not \`src/<layer>\``,
      );
    const cell = row[importsColumn] ?? "";
    const allowed = [...cell.matchAll(/`src\/([\w-]+)`/g)].map((m) => m[1] as string);
    if (allowed.length === 0 && cell !== "—")
      throw new Error(`docs/architecture.md "## Layers": ${layer} imports "${cell}"`);
    layers.set(layer, new Set(allowed));
  }
  return layers;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(join(dir, e.name))
      : e.name.endsWith(".ts")
        ? [join(dir, e.name)]
        : [],
  );
}

/** The relative module specifiers a file imports or re-exports, static or dynamic. */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [
    ...text.matchAll(/\b(?:import|export)\s[^;]*?\bfrom\s+["']([^"']+)["']/g),
    ...text.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g),
    ...text.matchAll(/^\s*import\s+["']([^"']+)["']/gm),
  ].map((m) => m[1] as string);
  return specifiers.filter((s) => s.startsWith("."));
}

const layerOf = (path: string) => relative(SRC, path).split(/[\\/]/)[0] as string;

describe("docs/architecture.md layers", () => {
  const layers = documentedLayers();

  it("names every directory of src/ as a layer, and no other", () => {
    const dirs = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(setDiff([...layers.keys()], dirs)).toEqual({
      missingFromDocs: [],
      unknownToCode: [],
      repeated: [],
    });
  });

  it("allows every import between layers that the code makes", () => {
    const violations: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const from = layerOf(file);
      for (const spec of relativeImports(file)) {
        const to = layerOf(resolve(dirname(file), spec));
        if (to !== from && !layers.get(from)?.has(to))
          violations.push(`${relative(ROOT, file)} imports ${spec} (${from} -> ${to})`);
      }
    }
    expect(violations).toEqual([]);
  });
});
