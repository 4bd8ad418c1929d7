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
import { expressible } from "./schema-subset.js";
import type { DialectCodec, TurnCall } from "./types.js";

/**
 * Gemini function declarations, one `Tool` holding them all. The schema goes as JSON Schema in
 * `parametersJsonSchema` (not the OpenAPI-subset `parameters`), rewritten by `expressible`: bound
 * values as typed one-value enums, other narrowings in the description.
 */
export type GeminiTool = {
  functionDeclarations: { name: string; description: string; parametersJsonSchema: JsonObject }[];
};

/** A `functionResponse` part answering one call. */
export type GeminiResponsePart = {
  functionResponse: { id?: string; name: string; response: { error: string } };
};

/** The content that carries a turn's function responses. */
export type GeminiResponseContent = { role: "user"; parts: GeminiResponsePart[] };

export function renderGeminiTools(view: CatalogView): GeminiTool[] {
  if (view.tools.length === 0) return [];
  return [{ functionDeclarations: view.tools.map(geminiDeclaration) }];
}

const geminiDeclaration = perEntry((t) => ({
  name: t.name,
  description: describeTool(t),
  parametersJsonSchema: expressible(t.inputSchema),
}));

/**
 * `functionCall` parts of a Gemini turn: a whole `generateContent` response (one candidate), its
 * `content` (`{role: "model", parts}`), or a bare list of parts. Calls usually carry no id (Charter
 * derives one); `args` is an object. Other parts (text, thoughts) are skipped.
 */
function readGemini(payload: unknown): RawCall[] {
  if (Array.isArray(payload)) return readParts(payload, "parts");
  const top = objectAt(payload, "the turn");
  if (top["candidates"] !== undefined) {
    const candidates = arrayAt(top["candidates"], "candidates");
    if (candidates.length !== 1)
      malformed(
        `candidates must hold exactly one candidate (it holds ${candidates.length}); send the chosen content`,
      );
    return readContent(
      objectAt(objectAt(candidates[0], "candidates[0]")["content"], "candidates[0].content"),
      "candidates[0].content.",
    );
  }
  return readContent(top, "");
}

function readContent(content: JsonObject, at: string): RawCall[] {
  if (content["role"] !== undefined && content["role"] !== "model")
    malformed(`${at}role must be "model"`);
  if (content["parts"] === undefined) return [];
  return readParts(arrayAt(content["parts"], `${at}parts`), `${at}parts`);
}

function readParts(parts: readonly unknown[], at: string): RawCall[] {
  return parts.flatMap((raw, i) => {
    const part = objectAt(raw, `${at}[${i}]`);
    if (part["functionCall"] === undefined) return [];
    const call = objectAt(part["functionCall"], `${at}[${i}].functionCall`);
    return [
      {
        id: stringIdAt(call["id"], `${at}[${i}].functionCall.id`),
        name: nameAt(call["name"], `${at}[${i}].functionCall.name`),
        arguments: argumentsAt(call["args"], `${at}[${i}].functionCall.args`),
      },
    ];
  });
}

/**
 * A non-allowed call's answer as a `functionResponse` part (the error under `response.error`). The
 * id is echoed only when the model sent one; Gemini matches responses to calls by name and order.
 */
export function geminiFeedback(call: TurnCall, verdict: Verdict): GeminiResponsePart {
  return {
    functionResponse: {
      ...(typeof call.wireId === "string" ? { id: call.wireId } : {}),
      name: call.toolName,
      response: { error: feedbackText(verdict) },
    },
  };
}

/** A turn's function responses as the one user content Gemini expects next. */
export function geminiMessages(parts: readonly GeminiResponsePart[]): GeminiResponseContent[] {
  return parts.length === 0 ? [] : [{ role: "user", parts: [...parts] }];
}

export const gemini: DialectCodec = {
  name: "gemini",
  renderTools: renderGeminiTools,
  parseCalls: (turn) => parseWith("gemini", turn, readGemini),
  renderFeedback: geminiFeedback,
  // The table only ever hands back what geminiFeedback rendered.
  feedbackMessages: (feedback) => geminiMessages(feedback as GeminiResponsePart[]),
};
