import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { fencedBlocks, parseMarkdown, tableCells, type MarkdownDoc } from "./markdown.js";

// The shape a newcomer can read: a short README, table cells that fit a table, links and anchors
// that lead somewhere, and the commands and paths the docs name existing in the repository.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const README_MAX_LINES = 200;
const CELL_MAX_CHARS = 300;
/** Pages generated from code elsewhere: their table cells are theirs to size. */
const GENERATED_ELSEWHERE: Record<string, string> = {
  "docs/configuration.md":
    "the settings tables, generated from the settings schema (test/config/settings-docs.test.ts)",
};

function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : [],
  );
}

const docs: MarkdownDoc[] = ["README.md", ...walk("docs").sort()].map((name) =>
  parseMarkdown(name, readFileSync(join(ROOT, name), "utf8")),
);
const ours = docs.filter((d) => !(d.name in GENERATED_ELSEWHERE));

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(path: string): Set<string> {
  const doc = parseMarkdown(path, readFileSync(join(ROOT, path), "utf8"));
  const ids = [...doc.lines.join("\n").matchAll(/<a id="([^"]+)"/g)].map((m) => m[1] as string);
  return new Set([...doc.headings.map((h) => slug(h.text)), ...ids]);
}

/** The text of a page outside its code blocks (links and inline code are read there). */
function prose(doc: MarkdownDoc): string {
  const fenced = new Set(
    fencedBlocks(doc).flatMap((b) =>
      Array.from({ length: b.lines.length + 2 }, (_, i) => b.line + i),
    ),
  );
  return doc.lines.filter((_, i) => !fenced.has(i)).join("\n");
}

describe("the docs' shape", () => {
  it(`keeps the README under ${README_MAX_LINES} lines`, () => {
    const readme = docs.find((d) => d.name === "README.md") as MarkdownDoc;
    expect(readme.lines.length).toBeLessThan(README_MAX_LINES);
  });

  it(`has no table cell over ${CELL_MAX_CHARS} characters`, () => {
    const long = ours.flatMap((d) =>
      tableCells(d)
        .filter((c) => c.cell.length > CELL_MAX_CHARS)
        .map((c) => `${d.name}:${c.line}: ${c.cell.length} characters: ${c.cell.slice(0, 60)}…`),
    );
    expect(long).toEqual([]);
  });

  it("links only to files and headings that exist", () => {
    const broken: string[] = [];
    for (const doc of docs) {
      for (const m of prose(doc).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] as string;
        if (/^[a-z]+:/.test(target)) continue;
        const [file, anchor] = target.split("#") as [string, string | undefined];
        const path =
          file === "" ? doc.name : normalize(relative(ROOT, join(ROOT, dirname(doc.name), file)));
        if (!existsSync(join(ROOT, path))) {
          if (!(path in GENERATED_ELSEWHERE)) broken.push(`${doc.name}: ${target} (no such file)`);
          continue;
        }
        if (anchor !== undefined && path.endsWith(".md") && !anchorsOf(path).has(anchor))
          broken.push(`${doc.name}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("names only npm scripts that package.json has", () => {
    const scripts = Object.keys(
      (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: object }).scripts,
    );
    const unknown = docs.flatMap((d) =>
      [...d.lines.join("\n").matchAll(/\bnpm run (?:--silent )?([\w:-]+)/g)]
        .map((m) => m[1] as string)
        .filter((s) => !scripts.includes(s))
        .map((s) => `${d.name}: npm run ${s}`),
    );
    expect(unknown).toEqual([]);
  });

  it("names only repository paths that exist", () => {
    const top = "src|test|bench|scripts|fixtures|examples|proto|docs";
    const re = new RegExp(`\`((?:${top})/[\\w./-]*[\\w/])\``, "g");
    const missing = docs.flatMap((d) =>
      [...prose(d).matchAll(re)]
        .map((m) => m[1] as string)
        .filter((p) => !p.includes("<") && !existsSync(join(ROOT, p)))
        .filter((p) => !(p in GENERATED_ELSEWHERE))
        .map((p) => `${d.name}: ${p}`),
    );
    expect([...new Set(missing)]).toEqual([]);
  });
});
