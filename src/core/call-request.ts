import type { JsonValue } from "./json.js";
import type { Step } from "./step.js";
import { parseStrictJson, type JsonLimits, type StrictJsonProblem } from "./strict-json.js";
import type { Target } from "./target.js";

/**
 * A tool call as a gateway sends it, before anything is decided: names as given ("" when absent)
 * and the arguments still as JSON text. `parseCallArguments` turns that text into the one value
 * that is then checked, digested and signed.
 */
export interface CallRequest {
  readonly callId: string;
  readonly toolName: string;
  readonly actionId: string;
  /** The arguments exactly as sent: JSON text; blank means no arguments (`{}`). */
  readonly argumentsJson: string;
  /** The approval the caller presents for this call, when retrying a call that required approval. */
  readonly approvalId?: string;
  /** What the call does once allowed; absent means "invoke the tool". */
  readonly target?: Target;
  /** A start-agent target's grant token, delegated from the calling grant for the sub-agent. */
  readonly delegatedGrantToken?: string;
  /** Where the call sits in its run; with one, the same step asked again answers the verdict already given. */
  readonly step?: Step;
}

/** The parsed arguments, or why the text is not usable (a message for the model). */
export type ParsedArguments =
  | { readonly ok: true; readonly value: JsonValue }
  | { readonly ok: false; readonly problem: StrictJsonProblem; readonly message: string };

/** Default bounds on a call's arguments: 256 KiB of UTF-8 and 32 levels of nesting. */
export const DEFAULT_ARGUMENT_LIMITS: JsonLimits = { maxBytes: 256 * 1024, maxDepth: 32 };

/**
 * Parses a call's arguments strictly (`parseStrictJson`); blank text means "no arguments" (`{}`).
 * Duplicate keys, a byte order mark, lone surrogates, numbers outside IEEE-754 and texts over the
 * limits are refused with a message naming the problem, never echoing a value.
 */
export function parseCallArguments(
  text: string,
  limits: JsonLimits = DEFAULT_ARGUMENT_LIMITS,
): ParsedArguments {
  if (isBlank(text)) return { ok: true, value: {} };
  const parsed = parseStrictJson(text, limits);
  if (parsed.ok) return parsed;
  return {
    ok: false,
    problem: parsed.problem,
    message: `The arguments are refused: ${parsed.message}. Send one JSON object and call again.`,
  };
}

/** Only JSON whitespace counts as blank (a lone U+FEFF is not blank: it is refused as a BOM). */
function isBlank(text: string): boolean {
  return /^[ \t\n\r]*$/.test(text);
}
