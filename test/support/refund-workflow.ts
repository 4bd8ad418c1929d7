import { create } from "@bufbuild/protobuf";
import { join } from "node:path";
import {
  ActivationAttemptSchema,
  GraphOperationSchema,
  OperationKind,
  StartAgentSchema,
  StepSchema,
  TargetSchema,
  ToolCallSchema,
  type ToolCall,
} from "../../src/gen/charter/v1/common_pb.js";
import {
  FIXTURES,
  startTestCharter,
  type TestCharter,
  type TestCharterOptions,
} from "./charter-server.js";

/** The refund workflow fixture's catalog and policy (fixtures/refund-workflow/). */
export const REFUND_WORKFLOW = {
  catalog: join(FIXTURES, "refund-workflow", "catalog.yaml"),
  policy: join(FIXTURES, "refund-workflow", "policy.yaml"),
};

/** A real Charter serving the refund workflow. */
export function startRefundCharter(options: TestCharterOptions = {}): Promise<TestCharter> {
  return startTestCharter({ ...options, config: { ...REFUND_WORKFLOW, ...options.config } });
}

/** Issues a grant of the refund-workflow profile through `via`; answers its token and id. */
export async function issueRun(
  via: TestCharter,
  subject = "graph:refund-run",
): Promise<{ token: string; id: string }> {
  const issued = await via.clients.grants.issueGrant({
    profile: "refund-workflow",
    subject,
    owner: "ana@example.com",
    purpose: "refund run",
  });
  return { token: issued.grantToken, id: issued.grant?.id ?? "" };
}

/** A graph operation call: attempt `attempt` of activation `activation` of `node`, in run `run`. */
export function operationCall(
  o: {
    run: string;
    node: string;
    activation: string;
    attempt?: number;
    action: string;
    definition?: string;
    kind: OperationKind;
    args: unknown;
  },
  callId = `${o.activation}#${o.attempt ?? 1}`,
): ToolCall {
  return create(ToolCallSchema, {
    callId,
    actionId: o.action,
    argumentsJson: JSON.stringify(o.args),
    target: create(TargetSchema, {
      kind: {
        case: "graphOperation",
        value: create(GraphOperationSchema, {
          nodeName: o.node,
          operationDefinitionId: o.definition ?? o.action,
          operationKind: o.kind,
        }),
      },
    }),
    step: create(StepSchema, {
      runId: o.run,
      of: {
        case: "activation",
        value: create(ActivationAttemptSchema, {
          activationId: o.activation,
          attempt: o.attempt ?? 1,
        }),
      },
    }),
  });
}

/** A model turn's call to start the refund helper agent, with the grant delegated for it (or none). */
export function startAgentCall(
  run: string,
  toolCallId: string,
  delegatedGrantToken = "",
): ToolCall {
  return create(ToolCallSchema, {
    callId: toolCallId,
    toolName: "start_refund_helper",
    argumentsJson: '{"order_id":"ord_A1B2C3"}',
    target: create(TargetSchema, {
      kind: {
        case: "startAgent",
        value: create(StartAgentSchema, {
          definitionName: "refund-helper",
          definitionVersion: "1",
          delegatedGrantToken,
        }),
      },
    }),
    step: create(StepSchema, { runId: run, of: { case: "toolCallId", value: toolCallId } }),
  });
}

export { OperationKind };
