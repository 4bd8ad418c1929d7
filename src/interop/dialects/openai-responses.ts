import type { JsonObject } from "../../core/json.js";
import type { Verdict } from "../../core/verdict.js";
import type { CatalogView } from "../../core/project.js";
import {
  argumentsAt,
  arrayAt,
  describeTool,
  feedbackText,
  malformed,
  nameAt,
  objectAt,
  parseWith,
  perEntry,
  stringIdAt,
  type RawCall,
} from "./common.js";
import { expressible, strictCompatible } from "./schema-subset.js";
import type { DialectCodec, TurnCall } from "./types.js";

/**
 * OpenAI Responses function tools, always with an explicit `strict` (the API reads an omitted one
 * as strict): `true` only when the schema is already in strict form, so strict never makes an
 * optional argument required; otherwise `false` and the view's schema as it is.
 */
export type ResponsesTool = {
  type: "function";
  name: string;
  description: string;
  parameters: JsonObject;
  strict: boolean;
};

/** A `function_call_output` item answering one call. */
export type ResponsesCallOutput = { type: "function_call_output"; call_id: string; output: string };

export function renderResponsesTools(view: CatalogView): ResponsesTool[] {
  return view.tools.map(responsesTool);
}

const responsesTool = perEntry((t): ResponsesTool => {
  const subset = expressible(t.inputSchema);
  const strict = strictCompatible(subset);
  return {
    type: "function",
    name: t.name,
    description: describeTool(t),
    parameters: strict ? subset : t.inputSchema,
    strict,
  };
});

/**
 * `function_call` items of a Responses turn: a whole `response` (its `output`), a bare list of
 * items (output or input items; other item types are skipped), or one item. An item is
 * `{type: "function_call", call_id, name, arguments}`.
 */
function readResponses(payload: unknown): RawCall[] {
  if (Array.isArray(payload)) return readItems(payload, "items");
  const top = objectAt(payload, "the turn");
  if (top["output"] !== undefined) return readItems(arrayAt(top["output"], "output"), "output");
  return readItems([top], "item");
}

function readItems(items: readonly unknown[], at: string): RawCall[] {
  return items.flatMap((raw, i) => {
    const where = items.length === 1 && at === "item" ? at : `${at}[${i}]`;
    const item = objectAt(raw, where);
    if (typeof item["type"] !== "string") malformed(`${where}.type must be a string`);
    if (item["type"] !== "function_call") return [];
    return [
      {
        id: stringIdAt(item["call_id"], `${where}.call_id`),
        name: nameAt(item["name"], `${where}.name`),
        arguments: argumentsAt(item["arguments"], `${where}.arguments`),
      },
    ];
  });
}

/** A non-allowed call's answer, as the item to add to the next request's input. */
export function responsesFeedback(call: TurnCall, verdict: Verdict): ResponsesCallOutput {
  return { type: "function_call_output", call_id: call.callId, output: feedbackText(verdict) };
}

export const openaiResponses: DialectCodec = {
  name: "openai_responses",
  renderTools: renderResponsesTools,
  parseCalls: (turn) => parseWith("openai_responses", turn, readResponses),
  renderFeedback: responsesFeedback,
  feedbackMessages: (feedback) => [...feedback],
};
