import { create } from "@bufbuild/protobuf";
import type { JsonValue } from "../core/json.js";
import {
  AuthorizeTurnResponseSchema,
  type AuthorizeTurnResponse,
} from "../gen/charter/v1/authority_pb.js";
import { ToolCallSchema } from "../gen/charter/v1/common_pb.js";
import type { TurnCall } from "./dialects/index.js";
import { verdictToProto, type VerdictExtras } from "./verdict-codec.js";
import type { Verdict } from "../core/verdict.js";

/** What AuthorizeTurn answers, in the domain: per call its parse, its decision and its feedback. */
export interface TurnAnswerLike {
  readonly calls: readonly {
    readonly call: TurnCall;
    readonly decided: VerdictExtras & { readonly verdict: Verdict };
    readonly feedback?: JsonValue;
  }[];
  readonly messages: readonly JsonValue[];
}

/** A turn's answer as the proto response; feedback travels as JSON text ("" for an allowed call). */
export function turnAnswerToProto(answer: TurnAnswerLike): AuthorizeTurnResponse {
  return create(AuthorizeTurnResponseSchema, {
    verdicts: answer.calls.map((a) => verdictToProto(a.decided.verdict, a.decided)),
    renderedResultsJson: JSON.stringify(answer.messages),
    calls: answer.calls.map((a) =>
      create(ToolCallSchema, {
        callId: a.call.callId,
        toolName: a.call.toolName,
        argumentsJson: a.call.argumentsJson,
      }),
    ),
    feedbackJson: answer.calls.map((a) =>
      a.feedback === undefined ? "" : JSON.stringify(a.feedback),
    ),
  });
}
