import { readFile } from "node:fs/promises";
import { parseDocument } from "yaml";
import { buildCatalog, type Catalog } from "../core/catalog.js";
import { LoadError } from "../core/errors.js";
import { buildPolicy, type Policy } from "../core/policy.js";

/**
 * Parses catalog or policy text. The format for humans is YAML (JSON, being YAML, is accepted
 * too); duplicate keys and syntax errors are load errors naming the file and line.
 */
export function parseDocumentText(text: string, file: string): unknown {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new LoadError(doc.errors.map((e) => ({ file, message: e.message.split("\n")[0] ?? e.message })));
  }
  return doc.toJS({ maxAliasCount: 100 }) as unknown;
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === "ENOENT" ? "file not found" : (err as Error).message;
    throw new LoadError([{ file, message: `cannot read: ${reason}` }]);
  }
}

/** Reads and checks a catalog file. */
export async function loadCatalogFile(file: string): Promise<Catalog> {
  return buildCatalog(parseDocumentText(await readText(file), file), file);
}

/** Reads and checks a policy file against a catalog. */
export async function loadPolicyFile(file: string, catalog: Catalog): Promise<Policy> {
  return buildPolicy(parseDocumentText(await readText(file), file), catalog, file);
}
