import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type { CallRequest } from "../../src/core/call-request.js";
import {
  GraphOperationSchema,
  OperationKind,
  StepSchema,
  TargetSchema,
  ToolCallSchema,
} from "../../src/gen/charter/v1/common_pb.js";
import { callFromProto, callToProto } from "../../src/interop/call-codec.js";
import { isDecodeError } from "../../src/interop/decode-error.js";

const base = { callId: "c1", toolName: "", actionId: "refund.issue", argumentsJson: "{}" };

describe("callFromProto() / callToProto() with targets and steps", () => {
  it.each<[string, CallRequest]>([
    ["no target and no step", base],
    [
      "a tool target and a tool call step",
      { ...base, target: { kind: "tool" }, step: { runId: "r", toolCallId: "tc" } },
    ],
    [
      "a start-agent target with its delegated grant token",
      {
        ...base,
        target: { kind: "start_agent", definitionName: "helper", definitionVersion: "2" },
        delegatedGrantToken: "eyJ.x.y",
      },
    ],
    [
      "a graph operation and an activation attempt",
      {
        ...base,
        target: {
          kind: "graph_operation",
          nodeName: "n",
          operationDefinitionId: "d",
          operationKind: "owned_job",
        },
        step: { runId: "r", activationId: "a", attempt: 2 },
      },
    ],
  ])("round-trips %s through the wire", (_name, call) => {
    const wire = fromBinary(ToolCallSchema, toBinary(ToolCallSchema, callToProto(call)));
    expect(callFromProto(wire, "call")).toEqual(call);
  });

  it("keeps an operation kind this version does not know visible as unknown(N), and UNSPECIFIED as unspecified", () => {
    const withKind = (operationKind: OperationKind) =>
      create(ToolCallSchema, {
        ...base,
        target: create(TargetSchema, {
          kind: { case: "graphOperation", value: create(GraphOperationSchema, { operationKind }) },
        }),
      });
    const wire = fromBinary(
      ToolCallSchema,
      toBinary(ToolCallSchema, withKind(42 as unknown as OperationKind)),
    );
    expect(callFromProto(wire, "call").target).toMatchObject({
      kind: "graph_operation",
      operationKind: "unknown(42)",
    });
    expect(callFromProto(withKind(OperationKind.UNSPECIFIED), "call").target).toMatchObject({
      operationKind: "unspecified",
    });
  });

  it("reads a present target without a kind it knows as unknown, never as a tool invocation", () => {
    // Field 9 of Target stands for a kind a newer client sends: this version keeps it as an unknown field only.
    const newer = new Uint8Array([
      ...toBinary(ToolCallSchema, create(ToolCallSchema, base)),
      0x2a,
      0x02,
      0x4a,
      0x00,
    ]);
    expect(callFromProto(fromBinary(ToolCallSchema, newer), "call").target).toEqual({
      kind: "unknown",
    });
    expect(
      callFromProto(create(ToolCallSchema, { ...base, target: create(TargetSchema) }), "call")
        .target,
    ).toEqual({ kind: "unknown" });
  });

  it("refuses a step that names neither a tool call nor an activation, naming the field", () => {
    let err: unknown;
    try {
      callFromProto(
        create(ToolCallSchema, { ...base, step: create(StepSchema, { runId: "r" }) }),
        "items[1].call",
      );
    } catch (e) {
      err = e;
    }
    expect(isDecodeError(err) && err.field).toBe("items[1].call.step");
  });
});
