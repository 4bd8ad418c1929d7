import { readFile } from "node:fs/promises";
import { parseDocument } from "yaml";
import { buildCatalog, type Catalog } from "../core/catalog.js";
import type { SchemaCompilerOptions } from "../core/schema.js";
import { LoadError } from "../core/errors.js";
import { buildPolicy, type Policy } from "../core/policy.js";

/**
 * Parses catalog or policy text. The format for humans is YAML (JSON, being YAML, is accepted
 * too); duplicate keys and syntax errors are load errors naming the file and line.
 */
export function parseDocumentText(text: string, file: string): unknown {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new LoadError(
      doc.errors.map((e) => ({ file, message: e.message.split("\n")[0] ?? e.message })),
    );
  }
  let value: unknown;
  try {
    // Aliases are expanded here: an unresolved one, or an alias bomb, is refused.
    value = doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (err) {
    throw new LoadError([{ file, message: err instanceof Error ? err.message : String(err) }]);
  }
  const problem = nonJson(value, "");
  if (problem !== undefined) throw new LoadError([{ file, message: problem }]);
  return value;
}

/** Where a parsed document holds something JSON cannot carry (NaN, Infinity, binary, sets, dates). */
function nonJson(value: unknown, path: string): string | undefined {
  const at = path === "" ? "the document" : path;
  if (value === null || typeof value === "string" || typeof value === "boolean") return undefined;
  if (typeof value === "number")
    return Number.isFinite(value) ? undefined : `${at}: ${String(value)} is not a JSON number`;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const p = nonJson(item, `${path}/${i}`);
      if (p !== undefined) return p;
    }
    return undefined;
  }
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [k, v] of Object.entries(value)) {
      const p = nonJson(v, `${path}/${k}`);
      if (p !== undefined) return p;
    }
    return undefined;
  }
  return `${at}: a ${value instanceof Object ? value.constructor.name : typeof value} is not a JSON value`;
}

/** Reads a catalog or policy file's text; a missing or unreadable file is a LoadError naming it. */
export async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    const reason =
      (err as NodeJS.ErrnoException).code === "ENOENT" ? "file not found" : (err as Error).message;
    throw new LoadError([{ file, message: `cannot read: ${reason}` }]);
  }
}

/** Reads and checks a catalog file. */
export async function loadCatalogFile(
  file: string,
  schemas: SchemaCompilerOptions = {},
): Promise<Catalog> {
  return buildCatalog(parseDocumentText(await readText(file), file), file, schemas);
}

/** Reads and checks a policy file against a catalog. */
export async function loadPolicyFile(file: string, catalog: Catalog): Promise<Policy> {
  return buildPolicy(parseDocumentText(await readText(file), file), catalog, file);
}

/** Checks catalog text read from `file`. */
export function catalogFromText(
  text: string,
  file: string,
  schemas: SchemaCompilerOptions = {},
): Catalog {
  return buildCatalog(parseDocumentText(text, file), file, schemas);
}

/** Checks policy text read from `file` against a catalog. */
export function policyFromText(text: string, file: string, catalog: Catalog): Policy {
  return buildPolicy(parseDocumentText(text, file), catalog, file);
}
