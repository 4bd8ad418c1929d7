import { create } from "@bufbuild/protobuf";
import { displayJson, displayText } from "../core/display-text.js";
import type { Endorsement, EndorsementStatus } from "../core/endorsement.js";
import {
  EndorsementSchema,
  EndorsementStatus as PbEndorsementStatus,
  type Endorsement as PbEndorsement,
} from "../gen/charter/v1/approval_pb.js";

export const ENDORSEMENT_STATUS_TO_PROTO: Readonly<Record<EndorsementStatus, PbEndorsementStatus>> =
  {
    active: PbEndorsementStatus.ACTIVE,
    revoked: PbEndorsementStatus.REVOKED,
  };

/** An endorsement as its proto message, every text in it as {@link displayEndorsement} shows it. */
export function endorsementToProto(e: Endorsement): PbEndorsement {
  return displayEndorsement(
    create(EndorsementSchema, {
      id: e.id,
      grantId: e.grantId,
      owner: e.owner,
      subject: e.subject,
      actionId: e.actionId,
      requirement: e.requirement,
      boundsJson: e.boundsJson,
      maxCalls: e.maxCalls,
      usedCalls: e.usedCalls,
      createdAt: BigInt(e.createdAt),
      expiresAt: BigInt(e.expiresAt),
      endorsedBy: e.endorsedBy,
      approvalId: e.approvalId,
      status: ENDORSEMENT_STATUS_TO_PROTO[e.status],
      revokedAt: BigInt(e.revokedAt ?? 0),
      revokedBy: e.revokedBy ?? "",
      rule: e.rule ?? "",
    }),
  );
}

/**
 * An endorsement as an owner may be shown it, as approvals are (`displayApproval`): every text a
 * caller or policy wrote (names, principals, the bounds' JSON) with control, bidi and invisible
 * characters as visible escapes. Idempotent, so the CLI applies it again to a server's answer.
 */
export function displayEndorsement(e: PbEndorsement): PbEndorsement {
  return create(EndorsementSchema, {
    ...e,
    grantId: displayText(e.grantId),
    owner: displayText(e.owner),
    subject: displayText(e.subject),
    actionId: displayText(e.actionId),
    requirement: displayText(e.requirement),
    boundsJson: displayJson(e.boundsJson),
    endorsedBy: displayText(e.endorsedBy),
    approvalId: displayText(e.approvalId),
    revokedBy: displayText(e.revokedBy),
    rule: displayText(e.rule),
  });
}
