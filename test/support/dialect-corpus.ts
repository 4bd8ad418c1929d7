import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { DialectName } from "../../src/interop/dialects/index.js";
import { parseJsonDocument, type JsonDocument } from "../../src/core/json-document.js";

export const CORPUS_ROOT = new URL("../../fixtures/dialects/v1/", import.meta.url).pathname;

/** What a turn must give: its calls, a verdict per call and the feedback messages; or an error. */
export type CorpusExpectation =
  | { readonly error: string }
  | {
      readonly calls: readonly unknown[];
      readonly verdicts: readonly CorpusVerdict[];
      readonly feedback: readonly unknown[];
    };

/** The parts of a verdict a corpus pins (decision ids and receipts differ run to run). */
export interface CorpusVerdict {
  readonly callId: string;
  readonly decision: string;
  readonly reason?: string;
  readonly requirement?: string;
}

/** One case of the dialect conformance corpus (`fixtures/dialects/v1/<dialect>/<name>.json`). */
export interface CorpusCase {
  readonly corpus: "charter-dialects/v1";
  readonly name: string;
  readonly dialect: DialectName;
  /** The demo policy profile the turn's grant is issued for. */
  readonly profile: string;
  /** Where the payload's shape comes from. */
  readonly source: string;
  readonly payload: unknown;
  readonly expect: CorpusExpectation;
  readonly file: string;
}

/** Every case, dialect by dialect, sorted by file name. */
export function readCorpus(): CorpusCase[] {
  return readdirSync(CORPUS_ROOT)
    .sort()
    .flatMap((dialect) =>
      readdirSync(join(CORPUS_ROOT, dialect))
        .filter((f) => f.endsWith(".json"))
        .sort()
        .map((f) => ({
          ...(JSON.parse(readFileSync(join(CORPUS_ROOT, dialect, f), "utf8")) as Omit<
            CorpusCase,
            "file"
          >),
          file: join(CORPUS_ROOT, dialect, f),
        })),
    );
}

/** A value as the document a codec reads: its JSON text, parsed as AuthorizeTurn parses a turn. */
export function turnDocument(value: unknown): JsonDocument {
  const read = parseJsonDocument(JSON.stringify(value), {
    maxBytes: Number.MAX_SAFE_INTEGER,
    maxDepth: 256,
  });
  if (!read.ok) throw new Error(`not a JSON document: ${read.message}`);
  return read.document;
}
