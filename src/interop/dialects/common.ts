import { canonicalJson, sha256Hex } from "../../core/digest.js";
import { isJsonObject, type JsonObject, type JsonValue } from "../../core/json.js";
import type { JsonDocument } from "../../core/json-document.js";
import type { ViewEntry } from "../../core/project.js";
import type { Verdict } from "../../core/verdict.js";
import { sharedRenderingTexts } from "../memo.js";
import type { DialectName, ParsedTurn, TurnCall } from "./types.js";

const APPROVAL_NOTE = " (Requires the owner's approval: a call is held until the owner decides.)";

/** A tool's description as a model sees it: requires-approval tools say so. */
export function describeTool(t: ViewEntry, extra = ""): string {
  return `${t.description}${extra}${t.status === "requires_approval" ? APPROVAL_NOTE : ""}`;
}

/** Thrown inside a parser to stop at the first problem; `parseWith` turns it into an error result. */
class Malformed extends Error {}

/** Stops parsing: the payload is malformed, for the reason given. */
export function malformed(problem: string): never {
  throw new Malformed(problem);
}

/**
 * Runs a dialect's reader over a turn read as a `JsonDocument` and checks what it found: every
 * call has a non-empty name, ids are unique, and calls without an id get a stable id derived
 * from the turn (its digest and the call's index). Each call's arguments leave as text — the
 * text the model sent, as it stands in the turn — so that they are parsed strictly once, by the
 * pipeline, exactly as Authorize parses them: a repeated key, a lone surrogate, a number out of
 * range or nesting too deep inside a call's arguments is that call's INVALID_ARGUMENTS deny. The
 * same problem anywhere else in the turn makes the turn malformed: nothing in it is decided.
 * Only `Malformed` is caught; any other throw is a bug and propagates.
 */
export function parseWith(
  dialect: DialectName,
  turn: JsonDocument,
  read: (payload: unknown) => readonly RawCall[],
): ParsedTurn {
  try {
    const raw = read(turn.value);
    const texts = raw.map((c) => argumentsText(turn, c.arguments));
    const stray = turn.problems.find((p) => !raw.some((c) => holds(turn, c.arguments, p.at)));
    if (stray) malformed(stray.message);
    const seen = new Set<string>();
    const calls: TurnCall[] = raw.map((c, index) => {
      const callId = c.id === undefined ? derivedId(dialect, turn.value, index) : String(c.id);
      if (seen.has(callId)) malformed(`call id ${JSON.stringify(callId)} appears more than once`);
      seen.add(callId);
      return {
        callId,
        ...(c.id === undefined ? {} : { wireId: c.id }),
        toolName: c.name,
        argumentsJson: texts[index] as string,
      };
    });
    return { ok: true, calls };
  } catch (err) {
    if (err instanceof Malformed) return { ok: false, error: `${dialect} turn: ${err.message}` };
    throw err;
  }
}

/** A call's arguments as a reader found them: the JSON text, the object, or absent. */
export type RawArguments = string | JsonObject | undefined;

/** A call as a reader found it, before ids are checked and derived. */
export interface RawCall {
  readonly id: string | number | undefined;
  readonly name: string;
  readonly arguments: RawArguments;
}

/** A string is the text as sent; an object is its text as it stands in the turn; absent is none. */
function argumentsText(turn: JsonDocument, args: RawArguments): string {
  if (args === undefined || typeof args === "string") return args ?? "";
  const span = turn.spanOf(args);
  // Every object of a document has its span; one without is not of this turn.
  if (span === undefined) throw new Error("arguments object outside the parsed turn");
  return turn.text.slice(span[0], span[1]);
}

/** Whether the position lies inside a call's arguments object as it stands in the turn. */
function holds(turn: JsonDocument, args: RawArguments, at: number): boolean {
  const span = typeof args === "object" ? turn.spanOf(args) : undefined;
  return span !== undefined && at >= span[0] && at < span[1];
}

/** `<dialect>_<12 hex of the turn's digest>_<index>`: the same turn always gets the same ids. */
function derivedId(dialect: DialectName, payload: unknown, index: number): string {
  return `${dialect}_${sha256Hex(canonicalJson(payload)).slice(0, 12)}_${index}`;
}

/** A field that must be an object. */
export function objectAt(value: unknown, where: string): JsonObject {
  if (!isJsonObject(value)) malformed(`${where} must be an object`);
  return value;
}

/** A field that must be an array. */
export function arrayAt(value: unknown, where: string): readonly unknown[] {
  if (!Array.isArray(value)) malformed(`${where} must be an array`);
  return value;
}

/** A tool name: a non-empty string (whether the catalog knows it is for Authorize to say). */
export function nameAt(value: unknown, where: string): string {
  if (typeof value !== "string" || value === "") malformed(`${where} must be a non-empty string`);
  return value;
}

/** An optional string id: absent (undefined or null) or a non-empty string. */
export function stringIdAt(value: unknown, where: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || value === "") malformed(`${where} must be a non-empty string`);
  return value;
}

/**
 * A call's arguments: a string is kept exactly as the model sent it (Authorize parses it, so text
 * that is not JSON is denied INVALID_ARGUMENTS with feedback), an object is handed on as its own
 * text in the turn (`parseWith`), absent means none. Anything else is malformed.
 */
export function argumentsAt(value: unknown, where: string): RawArguments {
  if (value === undefined || typeof value === "string" || isJsonObject(value)) return value;
  return malformed(`${where} must be a JSON object or a JSON string`);
}

/** The text a model is told about a non-allowed call: what happened and what to do. */
export function feedbackText(v: Verdict): string {
  switch (v.decision) {
    case "allow":
      return "Allowed.";
    case "deny":
      return `Denied (${v.reason?.code ?? "DENIED"}): ${v.reason?.message ?? "the call may not run."}`;
    case "effect_suppressed":
      return `Not run (${v.reason?.code ?? "SHADOW_MODE"}): ${v.reason?.message ?? "this is a dry run; the call's effect is suppressed."}`;
    case "require_approval": {
      // A rule over the run says why (RUN_RULE); otherwise the requirement alone.
      const held =
        v.reason?.code === "RUN_RULE"
          ? `Not run yet (RUN_RULE): ${v.reason.message}`
          : `Not run yet: this call needs the owner's approval (requirement "${v.requirement ?? "owner"}").`;
      const id =
        v.approvalId === undefined || v.approvalId === "" ? "" : ` Approval id: ${v.approvalId}.`;
      return `${held}${id} Once the owner has approved, make the same call again with the same arguments.`;
    }
  }
}

export { perEntry } from "../memo.js";

/**
 * `JSON.stringify(tools)` for a rendering: the same text, with each shared tool's text made once.
 * It walks the rendering's lists and wrappers (two levels at most) to reach the tools.
 */
export function toolsJson(tools: JsonValue): string {
  return jsonText(tools, 3);
}

/** JSON.stringify's text of `value` (an absent member is left out, an absent element is null). */
function jsonText(value: unknown, depth: number): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  if (sharedRenderingTexts.has(value)) {
    let text = sharedRenderingTexts.get(value);
    if (text === undefined) {
      text = JSON.stringify(value);
      sharedRenderingTexts.set(value, text);
    }
    return text;
  }
  if (depth === 0) return JSON.stringify(value);
  if (Array.isArray(value))
    return `[${value.map((v: unknown) => (v === undefined ? "null" : jsonText(v, depth - 1))).join(",")}]`;
  const members: string[] = [];
  for (const [key, v] of Object.entries(value))
    if (v !== undefined) members.push(`${JSON.stringify(key)}:${jsonText(v, depth - 1)}`);
  return `{${members.join(",")}}`;
}
