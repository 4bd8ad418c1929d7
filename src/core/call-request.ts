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
}

/** The parsed arguments, or why the text is not usable (a message for the model). */
export type ParsedArguments = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string };

/** Parses a call's arguments; blank text means "no arguments" (`{}`). */
export function parseCallArguments(text: string): ParsedArguments {
  if (text.trim() === "") return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, message: "The arguments are not valid JSON. Send a JSON object and call again." };
  }
}
