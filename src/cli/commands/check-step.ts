import { randomUUID } from "node:crypto";
import type { CallRequest } from "../../authority/index.js";
import { OPERATION_KIND_TO_PROTO } from "../../interop/target-codec.js";
import { UsageError } from "../options.js";

/** The flags of `charter check` that name a call's target and step. */
export const TARGET_STEP_FLAGS = {
  "call-id": { type: "string" },
  run: { type: "string" },
  "tool-call": { type: "string" },
  activation: { type: "string" },
  attempt: { type: "string" },
  operation: { type: "string" },
  node: { type: "string" },
  definition: { type: "string" },
  agent: { type: "string" },
  "agent-version": { type: "string" },
  "delegated-token": { type: "string" },
} as const;

type Values = { readonly [K in keyof typeof TARGET_STEP_FLAGS]?: string | undefined } & {
  readonly action?: string | undefined;
  readonly tool?: string | undefined;
};

const OPERATION_KINDS = Object.keys(OPERATION_KIND_TO_PROTO);

/**
 * The target and step the flags name: `--operation KIND [--node N] [--definition ID]` (definition
 * defaults to the action id) or `--agent NAME [--agent-version V] [--delegated-token T]`; a step is
 * `--run ID`, with `--tool-call ID` or `--activation ID [--attempt N]` (attempt 1 by default), or
 * alone: a new step of the run, so the call is decided in the run's state.
 */
export function targetAndStep(
  values: Values,
): Pick<CallRequest, "callId" | "target" | "step" | "delegatedGrantToken"> {
  const callId = values["call-id"] ?? "cli";
  if (values.operation !== undefined && values.agent !== undefined)
    throw new UsageError("give --operation or --agent, not both");
  const out: {
    -readonly [K in "callId" | "target" | "step" | "delegatedGrantToken"]?: CallRequest[K];
  } = { callId };
  if (values.operation !== undefined) {
    if (!OPERATION_KINDS.includes(values.operation))
      throw new UsageError(`--operation must be one of ${OPERATION_KINDS.join(", ")}`);
    const definition = values.definition ?? values.action;
    if (definition === undefined)
      throw new UsageError("--operation needs --definition or --action");
    out.target = {
      kind: "graph_operation",
      nodeName: values.node ?? "",
      operationDefinitionId: definition,
      operationKind: values.operation,
    };
  } else if (values.agent !== undefined) {
    out.target = {
      kind: "start_agent",
      definitionName: values.agent,
      definitionVersion: values["agent-version"] ?? "",
    };
    if (values["delegated-token"] !== undefined)
      out.delegatedGrantToken = values["delegated-token"];
  }
  const step = stepOf(values);
  if (step) out.step = step;
  return out as Pick<CallRequest, "callId" | "target" | "step" | "delegatedGrantToken">;
}

function stepOf(values: Values): CallRequest["step"] {
  const { run, activation } = values;
  const toolCall = values["tool-call"];
  if (run === undefined) {
    if (toolCall !== undefined || activation !== undefined)
      throw new UsageError("--tool-call and --activation need --run");
    return undefined;
  }
  if (toolCall !== undefined && activation !== undefined)
    throw new UsageError("give --tool-call or --activation, not both");
  // `--run ID` alone: the call is a new step of the run (decided in it, never a retry).
  if (activation === undefined)
    return { runId: run, toolCallId: toolCall ?? `cli-${randomUUID()}` };
  const attempt = Number(values.attempt ?? "1");
  if (!Number.isSafeInteger(attempt) || attempt < 1)
    throw new UsageError("--attempt must be a whole number from 1");
  return { runId: run, activationId: activation, attempt };
}
