import { create } from "@bufbuild/protobuf";
import type { CallRequest } from "../core/call-request.js";
import { ToolCallSchema, type ToolCall as PbToolCall } from "../gen/charter/v1/common_pb.js";
import { DecodeError } from "./decode-error.js";
import { stepFromProto, stepToProto, targetFromProto, targetToProto } from "./target-codec.js";

/**
 * A proto tool call as the domain request; an absent message, or a step that names neither a
 * tool call nor an activation, is a DecodeError naming `field`. An absent target stays absent
 * (invoke the tool); a present one that names no kind this version knows is kept as `unknown`.
 */
export function callFromProto(pb: PbToolCall | undefined, field: string): CallRequest {
  if (!pb) throw new DecodeError(field, "is required");
  const target = pb.target === undefined ? undefined : targetFromProto(pb.target);
  const step = pb.step === undefined ? undefined : stepFromProto(pb.step);
  if (pb.step !== undefined && step === undefined)
    throw new DecodeError(`${field}.step`, "tool_call_id or activation is required");
  return {
    callId: pb.callId,
    toolName: pb.toolName,
    actionId: pb.actionId,
    argumentsJson: pb.argumentsJson,
    ...(target === undefined ? {} : { target: target.target }),
    ...(target?.delegatedGrantToken ? { delegatedGrantToken: target.delegatedGrantToken } : {}),
    ...(step === undefined ? {} : { step }),
  };
}

/** A domain tool call request as its proto message. */
export function callToProto(call: CallRequest): PbToolCall {
  return create(ToolCallSchema, {
    callId: call.callId,
    toolName: call.toolName,
    actionId: call.actionId,
    argumentsJson: call.argumentsJson,
    ...(call.target === undefined
      ? {}
      : { target: targetToProto(call.target, call.delegatedGrantToken) }),
    ...(call.step === undefined ? {} : { step: stepToProto(call.step) }),
  });
}
