import { create } from "@bufbuild/protobuf";
import type { TaskGrant } from "../core/grant.js";
import type { ActionCaveats } from "../core/policy.js";
import {
  ActionCaveatsSchema,
  GrantSchema,
  LimitsSchema,
  RuleSchema,
  type Grant,
} from "../gen/charter/v1/common_pb.js";
import { MODE_TO_PROTO } from "./enums.js";

/** A domain grant as its proto message; JSON-valued caveats travel as JSON text. */
export function grantToProto(grant: TaskGrant): Grant {
  const caveats: Record<string, ReturnType<typeof caveatsToProto>> = {};
  for (const [actionId, c] of Object.entries(grant.caveats)) caveats[actionId] = caveatsToProto(c);
  return create(GrantSchema, {
    id: grant.id,
    rootId: grant.rootId,
    parentId: grant.parentId ?? "",
    chain: [...grant.chain],
    chainRuns: [...(grant.chainRuns ?? [])],
    subject: grant.subject,
    owner: grant.owner,
    purpose: grant.purpose,
    profile: grant.profile,
    issuedAt: BigInt(grant.issuedAt),
    expiresAt: BigInt(grant.expiresAt),
    catalogVersion: grant.catalogVersion,
    allowed: [...grant.allowed],
    approvalRequired: [...grant.approvalRequired],
    denied: [...grant.denied],
    caveats,
    limits: create(LimitsSchema, {
      ...(grant.limits.maxCalls === undefined ? {} : { maxCalls: grant.limits.maxCalls }),
      ...(grant.limits.maxCallsPerAction === undefined
        ? {}
        : { maxCallsPerAction: grant.limits.maxCallsPerAction }),
      maxDelegationDepth: grant.limits.maxDelegationDepth,
    }),
    mode: MODE_TO_PROTO[grant.mode],
    sources: [...grant.sources],
  });
}

function caveatsToProto(c: ActionCaveats) {
  return create(ActionCaveatsSchema, {
    constraintsJson: c.constraints.map((s) => JSON.stringify(s)),
    bindsJson: JSON.stringify(c.binds),
    rules: c.rules.map((r) =>
      create(RuleSchema, {
        whenJson: JSON.stringify(r.when),
        source: r.source,
        ...(r.id === undefined ? {} : { id: r.id }),
        ...(r.run === undefined ? {} : { runJson: JSON.stringify(r.run) }),
        then:
          r.then === "deny"
            ? { case: "deny", value: r.reason }
            : { case: "requireApproval", value: r.requirement },
      }),
    ),
  });
}
