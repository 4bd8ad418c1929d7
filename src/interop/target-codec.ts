import { create } from "@bufbuild/protobuf";
import type { OperationKind } from "../core/action-kind.js";
import type { Step } from "../core/step.js";
import type { Target } from "../core/target.js";
import {
  ActivationAttemptSchema,
  GraphOperationSchema,
  OperationKind as PbOperationKind,
  StartAgentSchema,
  StepSchema,
  TargetSchema,
  ToolInvocationSchema,
  type Step as PbStep,
  type Target as PbTarget,
} from "../gen/charter/v1/common_pb.js";

export const OPERATION_KIND_TO_PROTO: Readonly<Record<OperationKind, PbOperationKind>> = {
  activity: PbOperationKind.ACTIVITY,
  signal: PbOperationKind.SIGNAL,
  job: PbOperationKind.JOB,
  owned_job: PbOperationKind.OWNED_JOB,
  subgraph: PbOperationKind.SUBGRAPH,
  agent: PbOperationKind.AGENT,
  fork: PbOperationKind.FORK,
};

const OPERATION_KIND_OF = new Map<number, OperationKind>(
  (Object.entries(OPERATION_KIND_TO_PROTO) as [OperationKind, number][]).map(([d, p]) => [p, d]),
);

/**
 * A proto operation kind as the domain names it. UNSPECIFIED and a number this version does not
 * know (protobuf-es keeps it) stay visible as `unspecified` / `unknown(N)`: not an operation
 * kind, so the target check denies them UNKNOWN_TARGET_KIND.
 */
export function operationKindFromProto(kind: PbOperationKind): string {
  if (kind === PbOperationKind.UNSPECIFIED) return "unspecified";
  return OPERATION_KIND_OF.get(kind) ?? `unknown(${String(kind)})`;
}

/** What a proto target asks for, and the delegated grant token a start-agent target carries. */
export interface TargetFromProto {
  readonly target: Target;
  readonly delegatedGrantToken?: string;
}

/** A present proto target as the domain target. None set (an empty target, or a newer client's kind this version skips) is `unknown`. */
export function targetFromProto(pb: PbTarget): TargetFromProto {
  const k = pb.kind;
  switch (k.case) {
    case "tool":
      return { target: { kind: "tool" } };
    case "startAgent":
      return {
        target: {
          kind: "start_agent",
          definitionName: k.value.definitionName,
          definitionVersion: k.value.definitionVersion,
        },
        delegatedGrantToken: k.value.delegatedGrantToken,
      };
    case "graphOperation":
      return {
        target: {
          kind: "graph_operation",
          nodeName: k.value.nodeName,
          operationDefinitionId: k.value.operationDefinitionId,
          operationKind: operationKindFromProto(k.value.operationKind),
        },
      };
    default:
      return { target: { kind: "unknown" } };
  }
}

/** A domain target as its proto message; `unknown` (and an operation kind this version does not know) cannot be sent and becomes an empty target or UNSPECIFIED. */
export function targetToProto(target: Target, delegatedGrantToken = ""): PbTarget {
  switch (target.kind) {
    case "tool":
      return create(TargetSchema, { kind: { case: "tool", value: create(ToolInvocationSchema) } });
    case "start_agent":
      return create(TargetSchema, {
        kind: {
          case: "startAgent",
          value: create(StartAgentSchema, {
            definitionName: target.definitionName,
            definitionVersion: target.definitionVersion,
            delegatedGrantToken,
          }),
        },
      });
    case "graph_operation": {
      const known: Readonly<Partial<Record<string, PbOperationKind>>> = OPERATION_KIND_TO_PROTO;
      const operationKind = known[target.operationKind] ?? PbOperationKind.UNSPECIFIED;
      return create(TargetSchema, {
        kind: {
          case: "graphOperation",
          value: create(GraphOperationSchema, {
            nodeName: target.nodeName,
            operationDefinitionId: target.operationDefinitionId,
            operationKind,
          }),
        },
      });
    }
    case "unknown":
      return create(TargetSchema);
  }
}

/** A present proto step as the domain step; neither tool call nor activation set answers undefined (an invalid step). */
export function stepFromProto(pb: PbStep): Step | undefined {
  const of = pb.of;
  if (of.case === "toolCallId") return { runId: pb.runId, toolCallId: of.value };
  if (of.case === "activation")
    return { runId: pb.runId, activationId: of.value.activationId, attempt: of.value.attempt };
  return undefined;
}

export function stepToProto(step: Step): PbStep {
  return "toolCallId" in step
    ? create(StepSchema, { runId: step.runId, of: { case: "toolCallId", value: step.toolCallId } })
    : create(StepSchema, {
        runId: step.runId,
        of: {
          case: "activation",
          value: create(ActivationAttemptSchema, {
            activationId: step.activationId,
            attempt: step.attempt,
          }),
        },
      });
}
