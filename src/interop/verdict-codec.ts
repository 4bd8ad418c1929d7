import { create } from "@bufbuild/protobuf";
import type { Verdict } from "../core/verdict.js";
import {
  ReasonSchema,
  VerdictSchema,
  type Verdict as PbVerdict,
} from "../gen/charter/v1/common_pb.js";
import { DECISION_TO_PROTO } from "./enums.js";

/** What the shell adds to the core's verdict: the decision id and, on allow, the signed receipt. */
export interface VerdictExtras {
  readonly decisionId: string;
  readonly receipt?: string;
}

/** A verdict as its proto message; absent optional fields are empty strings. */
export function verdictToProto(v: Verdict, extras: VerdictExtras): PbVerdict {
  return create(VerdictSchema, {
    decision: DECISION_TO_PROTO[v.decision],
    ...(v.reason
      ? { reason: create(ReasonSchema, { code: v.reason.code, message: v.reason.message }) }
      : {}),
    callId: v.callId,
    actionId: v.actionId,
    toolName: v.toolName,
    resource: v.resource ?? "",
    requirement: v.requirement ?? "",
    approvalId: v.approvalId ?? "",
    callDigest: v.callDigest,
    decisionId: extras.decisionId,
    receipt: extras.receipt ?? "",
    runLabels: [...(v.runLabels ?? [])],
    rule: v.rule ?? "",
  });
}
