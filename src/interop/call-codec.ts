import { create } from "@bufbuild/protobuf";
import type { CallRequest } from "../core/call-request.js";
import { ToolCallSchema, type ToolCall as PbToolCall } from "../gen/charter/v1/common_pb.js";
import { DecodeError } from "./decode-error.js";

/** A proto tool call as the domain request; an absent message is a DecodeError naming `field`. */
export function callFromProto(pb: PbToolCall | undefined, field: string): CallRequest {
  if (!pb) throw new DecodeError(field, "is required");
  return { callId: pb.callId, toolName: pb.toolName, actionId: pb.actionId, argumentsJson: pb.argumentsJson };
}

/** A domain tool call request as its proto message. */
export function callToProto(call: CallRequest): PbToolCall {
  return create(ToolCallSchema, { callId: call.callId, toolName: call.toolName, actionId: call.actionId, argumentsJson: call.argumentsJson });
}
