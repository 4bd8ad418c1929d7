import type { JsonValue } from "./json.js";
import {
  parseCollecting,
  type CollectedProblem,
  type Collector,
  type JsonLimits,
  type StrictJsonProblem,
} from "./strict-json.js";

/** A problem a strict parse refuses, found by `parseJsonDocument`, and where it stands in the text. */
export type JsonProblemAt = CollectedProblem;

/**
 * A JSON text read whole even where a strict parse would refuse it, with where every object and
 * array of it stands in the text: what a door needs to hand on a part of a larger message (a
 * tool call's arguments inside a model turn) as the very text the client sent, so that the part
 * is parsed strictly once, exactly as if it had been sent alone. Where a problem is, the value
 * is a placeholder (the last of repeated keys; null for a number out of range; an empty
 * container for one nested too deep): a reader must not act on a document whose problems lie
 * outside the parts it hands on as text.
 */
export interface JsonDocument {
  readonly text: string;
  readonly value: JsonValue;
  /** The problems a strict parse of the whole text refuses, in text order. */
  readonly problems: readonly JsonProblemAt[];
  /** Where an object or array of `value` stands in `text`: [start, end); undefined for anything else. */
  spanOf(node: unknown): readonly [number, number] | undefined;
}

/** A document, or why the text is no JSON document at all (syntax, a BOM, over the size limit). */
export type JsonDocumentResult =
  | { readonly ok: true; readonly document: JsonDocument }
  | { readonly ok: false; readonly problem: StrictJsonProblem; readonly message: string };

/**
 * Parses a JSON text as `parseStrictJson` does, except that a repeated key, a lone surrogate, a
 * number out of range and nesting deeper than `limits.maxDepth` are collected with their
 * positions instead of refused (`JsonDocument`); a syntax error, a BOM and a text over
 * `limits.maxBytes` are still refusals. Total: it never throws.
 */
export function parseJsonDocument(text: string, limits: JsonLimits): JsonDocumentResult {
  const collector: Collector = { problems: [], spans: new WeakMap() };
  const parsed = parseCollecting(text, limits, collector);
  if (!parsed.ok) return parsed;
  const { problems, spans } = collector;
  const spanOf = (node: unknown) =>
    typeof node === "object" && node !== null ? spans.get(node) : undefined;
  return { ok: true, document: { text, value: parsed.value, problems, spanOf } };
}
