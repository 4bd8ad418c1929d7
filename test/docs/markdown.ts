/**
 * Just enough Markdown for the docs tests: headings and pipe tables outside code fences. Every
 * reader throws (naming the heading) instead of skipping what it cannot read, so a docs edit that
 * breaks the expected shape fails the test rather than silently checking nothing.
 */

/** A heading outside code fences; `line` is its 0-based line index. */
export interface Heading {
  readonly level: number;
  readonly text: string;
  readonly line: number;
}

/** A Markdown document split into lines, with its headings. */
export interface MarkdownDoc {
  readonly name: string;
  readonly lines: readonly string[];
  readonly headings: readonly Heading[];
}

/** A heading and the lines up to the next heading of the same or a higher level. */
export interface Section {
  readonly heading: Heading;
  readonly body: readonly string[];
}

/** A pipe table: its header cells and its data rows (the separator row is dropped). */
export interface Table {
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

const FENCE = /^\s*(```|~~~)/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;

export function parseMarkdown(name: string, text: string): MarkdownDoc {
  const lines = text.split(/\r?\n/);
  const headings: Heading[] = [];
  let fenced = false;
  lines.forEach((line, i) => {
    if (FENCE.test(line)) fenced = !fenced;
    else if (!fenced) {
      const m = HEADING.exec(line);
      if (m) headings.push({ level: (m[1] as string).length, text: m[2] as string, line: i });
    }
  });
  return { name, lines, headings };
}

/** The one section whose heading has this level and text; throws when there is none or several. */
export function section(doc: MarkdownDoc, level: number, text: string): Section {
  const found = doc.headings.filter((h) => h.level === level && h.text === text);
  if (found.length !== 1)
    throw new Error(
      `${doc.name}: expected one "${"#".repeat(level)} ${text}" heading, found ${found.length}`,
    );
  return sectionAt(doc, found[0] as Heading);
}

/** The sections of the given level nested in `parent`, in document order. */
export function subsections(doc: MarkdownDoc, parent: Section, level: number): Section[] {
  const start = parent.heading.line;
  const end = start + 1 + parent.body.length;
  return doc.headings
    .filter((h) => h.level === level && h.line > start && h.line < end)
    .map((h) => sectionAt(doc, h));
}

function sectionAt(doc: MarkdownDoc, heading: Heading): Section {
  const next = doc.headings.find((h) => h.line > heading.line && h.level <= heading.level);
  return { heading, body: doc.lines.slice(heading.line + 1, next?.line ?? doc.lines.length) };
}

/** The first pipe table of a section outside code fences; throws when there is none. */
export function firstTable(s: Section): Table {
  const rows: string[][] = [];
  let fenced = false;
  for (const line of s.body) {
    if (FENCE.test(line)) fenced = !fenced;
    const isRow = !fenced && line.trimStart().startsWith("|");
    if (isRow) rows.push(cells(line));
    else if (rows.length > 0) break;
  }
  const [header, separator, ...data] = rows;
  if (!header || !separator || !separator.every((c) => /^:?-+:?$/.test(c))) {
    throw new Error(`no pipe table (header row, separator row) under "${s.heading.text}"`);
  }
  return { header, rows: data };
}

function cells(line: string): string[] {
  const inner = line
    .trim()
    .replace(/^\|/, "")
    .replace(/(?<!\\)\|$/, "");
  return inner.split(/(?<!\\)\|/).map((c) => c.trim());
}

/** A cell that is exactly one upper-case code in backticks, such as `GRANT_EXPIRED`. */
const CODE_CELL = /^`([A-Z][A-Z0-9_]*)`$/;

/**
 * The codes of a table whose first column is headed `headerName` and holds one backticked
 * upper-case code per row. A row whose first cell is anything else is an error, not skipped.
 */
export function codeColumn(table: Table, headerName: string, where: string): string[] {
  if (table.header[0]?.toLowerCase() !== headerName.toLowerCase()) {
    throw new Error(
      `${where}: the table's first column must be headed "${headerName}", found "${table.header[0] ?? ""}"`,
    );
  }
  return table.rows.map((row) => {
    const m = CODE_CELL.exec(row[0] ?? "");
    if (!m)
      throw new Error(
        `${where}: first cell "${row[0] ?? ""}" is not a single \`CODE\` in backticks`,
      );
    return m[1] as string;
  });
}

/** Upper-case, code-shaped words in backticks anywhere in the text (`GRANT_INVALID`, not `grant_token`). */
export function backtickedCodes(text: string): string[] {
  return [...text.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/g)].map((m) => m[1] as string);
}

/** The paragraphs (runs of non-blank lines) of a section whose first line starts with `prefix`. */
export function paragraphsStartingWith(s: Section, prefix: string): string[] {
  const out: string[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph[0]?.startsWith(prefix)) out.push(paragraph.join("\n"));
    paragraph = [];
  };
  for (const line of s.body) {
    if (line.trim() === "") flush();
    else paragraph.push(line);
  }
  flush();
  return out;
}

/** Which of `expected` the docs lack, which they add, and which they repeat. */
export function setDiff(documented: readonly string[], expected: readonly string[]) {
  const want = new Set(expected);
  const have = new Set(documented);
  return {
    missingFromDocs: [...want].filter((c) => !have.has(c)).sort(),
    unknownToCode: [...have].filter((c) => !want.has(c)).sort(),
    repeated: documented.filter((c, i) => documented.indexOf(c) !== i).sort(),
  };
}

/** The lines of each fenced code block of a section whose fence names `lang` (```sh), in order. */
export function codeBlocks(s: Section, lang: string): string[][] {
  const blocks: string[][] = [];
  let current: string[] | undefined;
  for (const line of s.body) {
    if (current === undefined) {
      if (line.trim() === `\`\`\`${lang}`) current = [];
    } else if (FENCE.test(line)) {
      blocks.push(current);
      current = undefined;
    } else current.push(line);
  }
  if (current !== undefined) throw new Error(`"${s.heading.text}": a code block is not closed`);
  return blocks;
}

/** A fenced code block: its info string's first word (`sh`, `yaml`, "" for none), its lines, and the 0-based line of its opening fence. */
export interface FencedBlock {
  readonly lang: string;
  readonly lines: readonly string[];
  readonly line: number;
}

/** Every fenced code block of a document, in order; throws when one is not closed. */
export function fencedBlocks(doc: MarkdownDoc): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  let open: { lang: string; line: number; lines: string[] } | undefined;
  doc.lines.forEach((line, i) => {
    if (open === undefined) {
      const m = /^\s*(?:```|~~~)\s*([^\s`]*)/.exec(line);
      if (m) open = { lang: m[1] ?? "", line: i, lines: [] };
    } else if (FENCE.test(line)) {
      blocks.push(open);
      open = undefined;
    } else open.lines.push(line);
  });
  if (open !== undefined)
    throw new Error(`${doc.name}: the code block at line ${open.line + 1} is not closed`);
  return blocks;
}

/** The cells of every pipe-table row outside code fences, with their 1-based line numbers. */
export function tableCells(doc: MarkdownDoc): { line: number; cell: string }[] {
  const out: { line: number; cell: string }[] = [];
  let fenced = false;
  doc.lines.forEach((line, i) => {
    if (FENCE.test(line)) fenced = !fenced;
    else if (!fenced && line.trimStart().startsWith("|"))
      for (const cell of cells(line)) out.push({ line: i + 1, cell });
  });
  return out;
}
