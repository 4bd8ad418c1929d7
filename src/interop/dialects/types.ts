import type { JsonDocument } from "../../core/json-document.js";
import type { JsonValue } from "../../core/json.js";
import type { CatalogView } from "../../core/project.js";
import type { Verdict } from "../../core/verdict.js";

/** The model frameworks a catalog is rendered for and a turn is parsed from. */
export const DIALECT_NAMES = [
  "neutral",
  "openai_chat",
  "openai_responses",
  "anthropic",
  "mcp",
  "gemini",
  "langchain",
  "pydantic_ai",
] as const;

export type DialectName = (typeof DIALECT_NAMES)[number];

/** One tool call of a model turn, in the neutral shape. */
export interface TurnCall {
  /** The id Charter knows the call by: the turn's own id as text, or one derived from the turn when it gave none. */
  readonly callId: string;
  /** The id exactly as the turn wrote it (a string, or a number for MCP); absent when the turn gave none. */
  readonly wireId?: string | number;
  readonly toolName: string;
  /** The arguments as JSON text, exactly as the turn holds them (a string's text, or an object's own text); "" for none. */
  readonly argumentsJson: string;
}

/** A parsed turn, or why it is malformed (a message naming the dialect and what was wrong). */
export type ParsedTurn =
  | { readonly ok: true; readonly calls: readonly TurnCall[] }
  | { readonly ok: false; readonly error: string };

/**
 * One framework's shapes. Pure: no I/O. `parseCalls` never throws on any turn, and a turn it
 * cannot read is an error, never a call.
 */
export interface DialectCodec {
  readonly name: DialectName;
  /** The view's tools as the framework's tool list; only what the view holds is rendered. */
  renderTools(view: CatalogView): JsonValue;
  /** A model turn's tool calls (whole responses, message objects or bare arrays), in the turn's order. */
  parseCalls(turn: JsonDocument): ParsedTurn;
  /** A non-allowed call's result the way the framework feeds a tool error back to its model. */
  renderFeedback(call: TurnCall, verdict: Verdict): JsonValue;
  /** The feedback of one turn assembled into the messages (or items) to append to the conversation. */
  feedbackMessages(feedback: readonly JsonValue[]): JsonValue[];
}
